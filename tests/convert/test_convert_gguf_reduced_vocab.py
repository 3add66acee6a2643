"""A reduced draft vocabulary to GGUF as llama.cpp b11434 loads it (output.weight over the draft rows, d2t I64
of ABSOLUTE target ids, no t2d) and back to the very same flat checkpoint; d2t in the wrong convention for
its format is an error finding (DF218) in either format."""

from __future__ import annotations

import importlib.util
import json
import tempfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from _kit.cli import invoke_cli
from _kit.gguf import FIXTURES, header_of, rewrite, target_with_tokenizer
from dflash2_ckpt.cli import main
from dflash2_ckpt.dev.synth import materialise

GOOD = FIXTURES / "good" / "flat-v1-reduced-vocab"
_spec = importlib.util.spec_from_file_location("fixture_build", FIXTURES / "build.py")
assert _spec is not None and _spec.loader is not None
build = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(build)


def _maps(d: Path, d2t: np.ndarray, t2d: np.ndarray) -> Path:
    cfg = build.reduced_vocab(build.flat("v1"))
    tensors = build.reduced_vocab_layout(build.flat("v1"))
    base = build.data_for(tensors)
    data = {"d2t": d2t.astype("<i8").tobytes(), "t2d": t2d.astype(np.uint8).tobytes()}
    materialise(d, cfg, tensors, data=lambda n, k: data.get(n) or base(n, k))
    return d


def _tensor(g: Path, name: str) -> tuple[str, tuple[int, ...], bytes]:
    h = header_of(g)
    [t] = [t for t in h.tensors if t.name == name]
    return t.type_name, t.ne, g.read_bytes()[t.begin : t.end]


def _codes(path: Path, *extra: str) -> list[str]:
    r = invoke_cli(main, ["verify", str(path), "--format", "json", *extra])
    return [f["code"] for f in json.loads(r.stdout)["findings"]]


def _to_gguf(src: Path, g: Path, target: Path, *extra: str) -> object:
    return invoke_cli(
        main, ["convert", str(src), "-o", str(g), "--to", "gguf", "--target", str(target), *extra]
    )


@pytest.mark.parametrize("outtype", [[], ["--outtype", "bf16"]])
def test_to_gguf_as_llama_cpp_loads_it_and_back_to_the_same_files(tmp_path: Path, outtype: list[str]) -> None:
    g = tmp_path / "d.gguf"
    r = _to_gguf(GOOD, g, target_with_tokenizer(tmp_path / "target", build.V), *outtype)
    assert r.exit_code == 0, r.output
    names = [t.name for t in header_of(g).tensors]
    assert "t2d" not in names and "lm_head.weight" not in names
    kind, ne, raw = _tensor(g, "d2t")
    offsets = _source_tensor(GOOD, "d2t")
    assert kind == "I64" and ne == (build.DRAFT_V,)
    # absolute: what llama.cpp's converter writes (data + np.arange(data.size), conversion/qwen.py)
    assert np.array_equal(np.frombuffer(raw, "<i8"), np.frombuffer(offsets, "<i8") + np.arange(build.DRAFT_V))
    head_type, head_ne, _ = _tensor(g, "output.weight")
    assert head_ne == (build.H, build.DRAFT_V)  # {n_embd, n_vocab_draft}
    assert head_type == ("BF16" if outtype else "F32")
    assert "DF218" not in _codes(g)
    back = tmp_path / "back"
    r = invoke_cli(main, ["convert", str(g), "-o", str(back), "--to", "flat"])
    assert r.exit_code == 0, r.output
    if not outtype:
        assert (back / "model.safetensors").read_bytes() == (GOOD / "model.safetensors").read_bytes()
    else:  # the head was rounded to BF16; d2t and t2d come back as they were
        assert _source_tensor(back, "d2t") == offsets and _source_tensor(back, "t2d") == _source_tensor(
            GOOD, "t2d"
        )
    assert (back / "config.json").read_bytes() == (GOOD / "config.json").read_bytes()


def _source_tensor(d: Path, name: str) -> bytes:
    raw = (d / "model.safetensors").read_bytes()
    n = int.from_bytes(raw[:8], "little")
    b, e = json.loads(raw[8 : 8 + n])[name]["data_offsets"]
    return raw[8 + n + b : 8 + n + e]


def test_to_nested_is_refused_with_the_reason(tmp_path: Path) -> None:
    g = tmp_path / "d.gguf"
    _to_gguf(GOOD, g, target_with_tokenizer(tmp_path / "target", build.V))
    r = invoke_cli(main, ["convert", str(g), "-o", str(tmp_path / "n"), "--to", "nested", "--format", "json"])
    assert r.exit_code == 1 and "reduced draft vocabulary" in json.loads(r.stdout)["error"]["message"]
    assert not (tmp_path / "n").exists()


def test_a_gguf_without_its_source_config_is_refused_going_back(tmp_path: Path) -> None:
    """llama.cpp's converter carries no flat config: the nested form from the metadata has no draft vocabulary."""
    g = tmp_path / "d.gguf"
    _to_gguf(GOOD, g, target_with_tokenizer(tmp_path / "target", build.V))
    bare = rewrite(
        g,
        tmp_path / "bare.gguf",
        lambda a, kv, t: (a, {k: v for k, v in kv.items() if not k.startswith("dflash2_ckpt.")}, t),
    )
    r = invoke_cli(
        main, ["convert", str(bare), "-o", str(tmp_path / "f"), "--to", "flat", "--format", "json"]
    )
    assert r.exit_code == 1 and "carries none" in json.loads(r.stdout)["error"]["message"]
    assert not (tmp_path / "f").exists()


def test_maps_that_disagree_are_refused_before_anything_is_written(tmp_path: Path) -> None:
    d2t = np.arange(build.DRAFT_V)  # even ids, as the fixture
    t2d = np.zeros(build.V)
    t2d[0 : 2 * build.DRAFT_V : 2] = 1
    t2d[1] = 1  # one more kept id than d2t reaches
    t2d[0] = 0
    src = _maps(tmp_path / "src", d2t, t2d)
    g = tmp_path / "d.gguf"
    r = _to_gguf(src, g, target_with_tokenizer(tmp_path / "target", build.V), "--format", "json")
    assert r.exit_code == 1 and "t2d" in json.loads(r.stdout)["error"]["message"], r.output
    assert not g.exists()


def test_offsets_copied_into_a_gguf_are_df218(tmp_path: Path) -> None:
    """The golden table's offsets file: loads in llama.cpp and drafts nothing (τ 1.03); verify names it."""
    g = tmp_path / "d.gguf"
    _to_gguf(GOOD, g, target_with_tokenizer(tmp_path / "target", build.V))
    ids = np.unique(np.concatenate([[0, 1, 2], np.arange(3, build.V, 2)]))[
        : build.DRAFT_V
    ]  # 0,1,2 kept: offsets repeat
    offsets = ids - np.arange(build.DRAFT_V)

    def put(values: np.ndarray) -> Path:
        from llama_cpp.variants import rewrite as rw  # tests/ is on the path (pyproject `pythonpath`)

        return rw(
            g,
            tmp_path / f"{values[3]}.gguf",
            drop_tensors=["d2t"],
            add_tensors={"d2t": values.astype(np.int64)},
        )

    assert "DF218" not in _codes(put(ids))
    found = json.loads(invoke_cli(main, ["verify", str(put(offsets)), "--format", "json"]).stdout)["findings"]
    [f] = [f for f in found if f["code"] == "DF218"]
    assert f["severity"] == "error" and "offsets" in f["message"] and f["tensor"] == "d2t"
    doc = json.loads(
        invoke_cli(main, ["compat", str(put(offsets)), "--engine", "llama.cpp", "--format", "json"]).stdout
    )
    assert {e["verdict"] for e in doc["engines"]} == {"fails"}


def test_absolute_ids_stored_in_safetensors_are_df218(tmp_path: Path) -> None:
    """The other way round: a flat checkpoint whose d2t holds absolute ids (speculators adds the draft id)."""
    ids = np.concatenate([np.arange(0, 2 * build.DRAFT_V - 4, 2), [build.V - 2, build.V - 1]])
    t2d = np.zeros(build.V)
    t2d[ids] = 1
    found = json.loads(
        invoke_cli(main, ["verify", str(_maps(tmp_path / "abs", ids, t2d)), "--format", "json"]).stdout
    )["findings"]
    [f] = [f for f in found if f["code"] == "DF218"]
    assert "outside the target vocabulary" in f["message"] and "absolute" in f["message"]


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.permutations(list(range(build.V))))
def test_any_consistent_draft_vocabulary_round_trips(perm: list[int]) -> None:
    """Every kept-id choice: the GGUF holds the kept ids themselves, and the flat checkpoint comes back."""
    chosen = np.array(sorted(perm[: build.DRAFT_V]))
    t2d = np.zeros(build.V)
    t2d[chosen] = 1
    with tempfile.TemporaryDirectory() as d:
        root = Path(d)
        src = _maps(root / "src", chosen - np.arange(build.DRAFT_V), t2d)
        g = root / "d.gguf"
        assert _to_gguf(src, g, target_with_tokenizer(root / "target", build.V)).exit_code == 0
        assert np.array_equal(np.frombuffer(_tensor(g, "d2t")[2], "<i8"), chosen)
        assert invoke_cli(main, ["convert", str(g), "-o", str(root / "back"), "--to", "flat"]).exit_code == 0
        assert (root / "back" / "model.safetensors").read_bytes() == (src / "model.safetensors").read_bytes()
