"""A GGUF drafter as the "gguf" dialect: the same DraftSpec as its HF source, every existing check running
on it, and each DF9xx finding produced by the file that has the problem."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from _kit.gguf import FIXTURES, TINY_TARGET, KVs, Tensors, rewrite, to_gguf
from dflash2_ckpt.checkpoint import open_checkpoint
from dflash2_ckpt.checks.gguf import gguf_findings
from dflash2_ckpt.codes import REGISTRY
from dflash2_ckpt.convert.gguf_exact import gguf_differences
from dflash2_ckpt.errors import SourceError
from dflash2_ckpt.formats import gguf_names as N
from dflash2_ckpt.usecases.verify import inspect, verify
from gguf import GGMLQuantizationType, GGUFValueType, LlamaFileType


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("dialect")
    return {
        name: to_gguf(FIXTURES / "good" / name, d / f"{name}.gguf")
        for name in ("nested-v2", "nested-v1", "flat-v2")
    }


def codes(path: Path, **kw: Any) -> set[str]:
    return {f.code for f in verify(path, **kw).findings}


def edit_kv(fn: Any) -> Any:
    def edit(arch: str, kv: KVs, tensors: Tensors) -> tuple[str, KVs, Tensors]:
        fn(kv)
        return arch, kv, tensors

    return edit


@pytest.mark.parametrize("name", ["nested-v2", "nested-v1", "flat-v2"])
def test_same_drafter_as_the_hf_source(files: dict[str, Path], name: str) -> None:
    hf, gg = open_checkpoint(FIXTURES / "good" / name), open_checkpoint(files[name])
    assert gg.detection is not None and gg.detection.dialect == "gguf"
    assert hf.spec is not None and gg.spec is not None and gg.spec.dialect == "gguf"
    assert gguf_differences(hf.spec, gg.spec) == []
    assert set(gg.tensors) == set(hf.tensors)
    assert all(gg.tensors[n].shape == hf.tensors[n].shape for n in hf.tensors)  # ne reversed = HF shape
    assert gg.gguf is not None and gg.gguf.get(N.KEY_TARGET_LAYERS) == [
        t + 1 for t in hf.spec.target_layer_ids
    ]


def test_exact_keys_and_tensor_names_of_engines_md(files: dict[str, Path]) -> None:
    from gguf import GGUFReader

    r = GGUFReader(files["nested-v2"])
    keys = set(r.fields)
    want = {"general.architecture", N.KEY_MASK} | {
        f"dflash.{k}"
        for k in (
            "block_count",
            "context_length",
            "embedding_length",
            "feed_forward_length",
            "attention.head_count",
            "attention.head_count_kv",
            "attention.key_length",
            "attention.value_length",
            "attention.layer_norm_rms_epsilon",
            "attention.causal",
            "attention.sliding_window",
            "attention.sliding_window_pattern",
            "rope.freq_base",
            "block_size",
            "conv_kernel_size",
            "conv_group_size",
            "selector_rank",
            "selector_top_k",
            "target_layers",
        )
    }
    assert want <= keys
    assert bytes(r.fields["general.architecture"].parts[-1]).decode() == "dflash"
    names = {t.name for t in r.tensors}
    layer = {
        f"blk.{i}.{s}"
        for i in range(2)
        for s in (
            "attn_norm.weight",
            "ffn_norm.weight",
            "attn_q.weight",
            "attn_k.weight",
            "attn_v.weight",
            "attn_output.weight",
            "attn_q_norm.weight",
            "attn_k_norm.weight",
            "ffn_gate.weight",
            "ffn_up.weight",
            "ffn_down.weight",
            "attn_conv_base",
            "attn_conv_proj.weight",
            "ffn_conv_base",
            "ffn_conv_proj.weight",
        )
    }
    assert (
        names
        == {
            "fc.weight",
            "enc.output_norm.weight",
            "output_norm.weight",
            "selector_predecessor.weight",
            "selector_successor.weight",
            "selector_hidden.weight",
        }
        | layer
    )
    assert len(names) == 3 + 15 * 2 + 3


def test_existing_checks_run_on_gguf(files: dict[str, Path], tmp_path: Path) -> None:
    def wrong_fc(arch: str, kv: KVs, tensors: Tensors) -> tuple[str, KVs, Tensors]:
        # (a halved fc would be read as a narrower target hidden size: GGUF has no key for it; --target
        # catches that one as DF502 below)
        t = [
            (n, q, (s[0] // 2, s[1]), d[: len(d) // 2]) if n == "blk.0.attn_q.weight" else (n, q, s, d)
            for n, q, s, d in tensors
        ]
        return arch, kv, t

    assert "DF203" in codes(rewrite(files["nested-v2"], tmp_path / "fc.gguf", wrong_fc))
    missing = rewrite(
        files["nested-v2"],
        tmp_path / "miss.gguf",
        lambda a, kv, t: (a, kv, [x for x in t if x[0] != "blk.1.ffn_up.weight"]),
    )
    assert "DF201" in codes(missing)
    big_mask = rewrite(
        files["nested-v2"],
        tmp_path / "m.gguf",
        edit_kv(lambda kv: kv.update({N.KEY_MASK: (999, GGUFValueType.UINT32, None)})),
    )
    assert "DF106" in codes(big_mask)
    assert "DF502" in codes(files["nested-v2"], target=_target(tmp_path, hidden=16))


def _target(tmp: Path, **over: Any) -> Path:
    d = tmp / "target"
    shutil.copytree(TINY_TARGET, d, dirs_exist_ok=True)
    cfg = json.loads((d / "config.json").read_text())
    cfg.update({("hidden_size" if k == "hidden" else k): v for k, v in over.items()})
    (d / "config.json").write_text(json.dumps(cfg))
    return d


def test_header_only_and_no_tensor_data(files: dict[str, Path]) -> None:
    report = verify(files["nested-v2"])
    h = open_checkpoint(files["nested-v2"]).gguf
    assert h is not None and report.bytes_read < h.data_start + 16 * 1024 * 2


def test_inspect_lists_every_tensor_type_and_bytes_by_component(
    files: dict[str, Path], tmp_path: Path
) -> None:
    q = to_gguf(FIXTURES / "good" / "nested-v2", tmp_path / "q.gguf", outtype="q8_0")
    s = inspect(q).summary
    rows = {r["tensor"]: r for r in s["tensor_types"]}
    assert rows["blk.0.attn_q.weight"]["type"] == "Q8_0" and rows["output_norm.weight"]["type"] == "F32"
    assert rows["blk.0.attn_conv_base"]["type"] == "F32"
    assert s["bytes_by_component"]["selector"] == sum(
        r["bytes"] for r in s["tensor_types"] if r["tensor"].startswith("selector_")
    )
    assert s["dialect"] == "gguf" and s["files"] == ["q.gguf"]


# --- one test per DF9xx code -----------------------------------------------------------------------------


def test_df900_bad_header(files: dict[str, Path], tmp_path: Path) -> None:
    p = tmp_path / "t.gguf"
    p.write_bytes(files["nested-v2"].read_bytes()[:200])
    r = verify(p)
    assert [f.code for f in r.findings] == ["DF900"] and r.failed()


def test_df901_fork_architecture(files: dict[str, Path], tmp_path: Path) -> None:
    def fork(arch: str, kv: KVs, t: Tensors) -> tuple[str, KVs, Tensors]:
        kv = {
            ("dflash-draft.dflash." + k[len("dflash.") :] if k.startswith("dflash.") else k): v
            for k, v in kv.items()
        }
        return "dflash-draft", kv, t

    found = verify(rewrite(files["nested-v2"], tmp_path / "f.gguf", fork)).findings
    f = [x for x in found if x.code == "DF901"]
    assert f and "dflash-draft" in f[0].message and "Set general.architecture" in f[0].message
    assert "DF911" not in {x.code for x in found}
    other = rewrite(files["nested-v2"], tmp_path / "o.gguf", lambda a, kv, t: ("llama", kv, t))
    assert "DF901" in codes(other)


def test_df902_target_layers_missing(files: dict[str, Path], tmp_path: Path) -> None:
    p = rewrite(files["nested-v2"], tmp_path / "t.gguf", edit_kv(lambda kv: kv.pop(N.KEY_TARGET_LAYERS)))
    assert "DF902" in codes(p)


def test_df903_unshifted_taps(files: dict[str, Path], tmp_path: Path) -> None:
    # the fixture's taps are [0, 2]: written unshifted they contain 0, which no layer input can be
    p = rewrite(
        files["nested-v2"],
        tmp_path / "u.gguf",
        edit_kv(
            lambda kv: kv.update({N.KEY_TARGET_LAYERS: ([0, 2], GGUFValueType.ARRAY, GGUFValueType.UINT32)})
        ),
    )
    f = [x for x in verify(p, target=TINY_TARGET).findings if x.code == "DF903"]
    assert f and f[0].details["expected"] == [1, 3]
    # without a 0, only the HF source can tell
    p2 = rewrite(
        files["nested-v2"],
        tmp_path / "u2.gguf",
        edit_kv(
            lambda kv: kv.update({N.KEY_TARGET_LAYERS: ([1, 2], GGUFValueType.ARRAY, GGUFValueType.UINT32)})
        ),
    )
    ref = open_checkpoint(FIXTURES / "good" / "nested-v2").spec
    assert ref is not None
    assert "DF903" not in codes(p2)
    assert "DF903" in {
        f.code for f in gguf_findings(open_checkpoint(p2), reference=ref.with_(target_layer_ids=(1, 2)))
    }


def test_df904_df905_mask(files: dict[str, Path], tmp_path: Path) -> None:
    p = rewrite(files["nested-v2"], tmp_path / "m.gguf", edit_kv(lambda kv: kv.pop(N.KEY_MASK)))
    found = codes(p)
    assert "DF904" in found and "DF113" not in found
    ref = open_checkpoint(FIXTURES / "good" / "nested-v2").spec
    assert ref is not None
    donor = rewrite(
        files["nested-v2"],
        tmp_path / "d.gguf",
        edit_kv(lambda kv: kv.update({N.KEY_MASK: (5, GGUFValueType.UINT32, None)})),
    )
    f = [x for x in gguf_findings(open_checkpoint(donor), reference=ref) if x.code == "DF905"]
    assert f and f[0].details == {"gguf": 5, "hf": ref.mask_token_id}


def test_df906_conv_selector_metadata(files: dict[str, Path], tmp_path: Path) -> None:
    zero = rewrite(
        files["nested-v2"],
        tmp_path / "z.gguf",
        edit_kv(lambda kv: kv.update({N.KEY_CONV_GROUP: (0, GGUFValueType.UINT32, None)})),
    )
    assert "DF906" in codes(zero)
    gone = rewrite(
        files["nested-v2"],
        tmp_path / "g.gguf",
        edit_kv(lambda kv: [kv.pop(k) for k in list(N.V2_KEYS.values())]),
    )
    assert "DF906" in codes(gone)


def test_df907_top_k_vs_hidden(files: dict[str, Path], tmp_path: Path) -> None:
    assert "DF907" in codes(files["nested-v2"])  # H = 32 < 8 * 9
    ok = rewrite(
        files["nested-v2"],
        tmp_path / "k.gguf",
        edit_kv(lambda kv: kv.update({N.KEY_SEL_TOP_K: (4, GGUFValueType.UINT32, None)})),
    )
    assert "DF907" not in codes(ok)


def test_df908_low_precision_codebooks(files: dict[str, Path], tmp_path: Path) -> None:
    from dflash2_ckpt.sources.gguf_header import tensor_nbytes

    def mxfp4(arch: str, kv: KVs, tensors: Tensors) -> tuple[str, KVs, Tensors]:
        out = []
        for n, q, s, d in tensors:
            if n == "blk.0.attn_conv_proj.weight":
                q = GGMLQuantizationType.MXFP4
                d = bytes(tensor_nbytes(q, tuple(reversed(s))))
            out.append((n, q, s, d))
        return arch, kv, out

    p = rewrite(files["nested-v2"], tmp_path / "x.gguf", mxfp4)
    f = [x for x in verify(p).findings if x.code == "DF908"]
    assert [x.tensor for x in f] == ["blk.0.attn_conv_proj.weight"] and f[0].severity == "warning"
    q8 = to_gguf(FIXTURES / "good" / "nested-v2", tmp_path / "q8.gguf", outtype="q8_0")
    assert "DF908" not in codes(q8)  # Q8_0 holds acceptance


def test_df909_file_type_contradiction(files: dict[str, Path], tmp_path: Path) -> None:
    p = rewrite(
        files["nested-v2"],
        tmp_path / "ft.gguf",
        edit_kv(
            lambda kv: kv.update(
                {N.KEY_FILE_TYPE: (int(LlamaFileType.MOSTLY_Q4_K_M), GGUFValueType.UINT32, None)}
            )
        ),
    )
    f = [x for x in verify(p).findings if x.code == "DF909"]
    assert f and f[0].severity == "info" and "F32" in f[0].message
    assert "DF909" not in codes(files["nested-v2"])


def test_df910_bias_dropped(tmp_path: Path) -> None:
    from _kit.convert import (
        build,
        drafters,  # noqa: F401  (the generator's parameter names)
        nested_config,
    )

    p = {
        "version": "v1",
        "H": 16,
        "I": 16,
        "layers": 1,
        "nq": 2,
        "nkv": 1,
        "hd": 8,
        "V": 64,
        "bias": True,
        "theta": 10000.0,
        "layer_types": ["sliding_attention"],
        "causal": False,
        "block": 4,
        "mask": 63,
        "taps": [0, 2],
        "dtype": "float32",
    }
    src = build(tmp_path / "biased", nested_config(p))
    g = to_gguf(src, tmp_path / "b.gguf")
    assert any(t.endswith(".bias") for t in open_checkpoint(g).tensors)  # our converter keeps them
    dropped = rewrite(
        g, tmp_path / "nb.gguf", lambda a, kv, t: (a, kv, [x for x in t if not x[0].endswith(".bias")])
    )
    ref = open_checkpoint(src)
    f = [
        x
        for x in gguf_findings(
            open_checkpoint(dropped), reference=ref.spec, reference_tensors=list(ref.tensors)
        )
        if x.code == "DF910"
    ]
    assert f and len(f[0].details["missing"]) == 4


def test_df911_required_key(files: dict[str, Path], tmp_path: Path) -> None:
    p = rewrite(files["nested-v2"], tmp_path / "e.gguf", edit_kv(lambda kv: kv.pop(N.KEY_EMBED)))
    assert "DF911" in codes(p)
    s = rewrite(
        files["nested-v2"],
        tmp_path / "s.gguf",
        edit_kv(lambda kv: kv.update({N.KEY_BLOCK_COUNT: ("2", GGUFValueType.STRING, None)})),
    )
    assert "DF911" in codes(s)


def test_df912_gguf_beside_safetensors(files: dict[str, Path], tmp_path: Path) -> None:
    d = tmp_path / "both"
    shutil.copytree(FIXTURES / "good" / "nested-v2", d)
    shutil.copy(files["nested-v2"], d / "drafter.gguf")
    f = [x for x in verify(d).findings if x.code == "DF912"]
    assert f and "drafter.gguf" in f[0].message
    assert REGISTRY["DF610"].status == "deprecated"


def test_df913_tokenizer_missing(files: dict[str, Path], tmp_path: Path) -> None:
    p = rewrite(
        files["nested-v2"],
        tmp_path / "n.gguf",
        edit_kv(
            lambda kv: [kv.pop(k) for k in list(kv) if k.startswith("tokenizer.ggml.") and k != N.KEY_MASK]
        ),
    )
    assert "DF913" in codes(p)
    assert "DF913" not in codes(files["nested-v2"])


def test_folder_with_gguf_files_only(files: dict[str, Path], tmp_path: Path) -> None:
    d = tmp_path / "repo"
    d.mkdir()
    shutil.copy(files["nested-v2"], d / "a.gguf")
    (d / "config.json").write_text("{}")  # GGUF repos often carry one; no safetensors: the GGUF is checked
    assert verify(d).summary["dialect"] == "gguf"
    shutil.copy(files["nested-v1"], d / "b.gguf")
    with pytest.raises(SourceError, match="2 GGUF files"):
        verify(d)
    assert verify(d / "b.gguf").summary["version"] == "v1"
