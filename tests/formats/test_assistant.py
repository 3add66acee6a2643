"""The assistant export dialect (Muse-Glimmer): detected by structure as DFlash v1, every check runs,
the encoder.* names are reported for what they are, and convert writes the standard dialects bit-exact."""

from __future__ import annotations

import hashlib
import importlib.util
import json
from pathlib import Path

import pytest

from _kit.cli import invoke, invoke_cli
from conftest import FIXTURES
from dflash2_ckpt import require_version, verify
from dflash2_ckpt.checkpoint import open_checkpoint
from dflash2_ckpt.cli import main
from dflash2_ckpt.convert import convert
from dflash2_ckpt.dev.synth import materialise
from dflash2_ckpt.formats.detect import detect
from dflash2_ckpt.usecases.verify import inspect

_spec = importlib.util.spec_from_file_location("fixture_build", FIXTURES / "build.py")
assert _spec is not None and _spec.loader is not None
build = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(build)

TINY = FIXTURES / "good" / "assistant-v1"
TARGET = FIXTURES / "targets" / "tiny-target"


@pytest.fixture(scope="module")
def real_shape(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Muse-Glimmer's drafter shapes in the assistant dialect, BF16, data left sparse (5.1 GB of holes)."""
    cfg = build.real_assistant_config()
    d = tmp_path_factory.mktemp("glimmer") / "assistant"
    materialise(d, cfg, build.assistant_layout(cfg, "BF16"))
    return d


def tensor_bytes(d: Path, name: str) -> bytes:
    raw = (
        (d / "model.safetensors").read_bytes() if (d / "model.safetensors").stat().st_size < 1 << 24 else b""
    )
    n = int.from_bytes(raw[:8], "little")
    t = json.loads(raw[8 : 8 + n])[name]
    b, e = t["data_offsets"]
    return raw[8 + n + b : 8 + n + e]


def test_real_shape_is_detected_and_every_check_runs(real_shape: Path) -> None:
    r = verify(real_shape, target=None)
    assert r.summary["dialect"] == "assistant" and r.summary["version"] == "v1"
    codes = [f.code for f in r.findings]
    assert "DF304" not in codes and not r.failed(), r.findings
    assert codes.count("DF305") == 1 and "DF208" not in codes and "DF202" not in codes
    note = next(f for f in r.findings if f.code == "DF305")
    assert note.details["remapped_by"] == ["vllm"] and "sglang" in note.details["not_remapped_by"]
    assert note.details["renames"] == {
        "encoder.fc.weight": "fc.weight",
        "encoder.output_norm_enc.weight": "hidden_norm.weight",
    }
    # the checks ran on the real geometry: fc takes 5 taps of 6656
    assert r.summary["geometry"]["hidden_size"] == 6656 and r.summary["geometry"]["target_layer_ids"] == [
        1,
        13,
        25,
        37,
        49,
    ]


def test_inspect_counts_the_encoder_as_trunk(real_shape: Path) -> None:
    s = inspect(real_shape).summary
    assert s["bytes_by_component"]["extras"] == 0
    assert s["bytes_by_component"]["trunk"] == s["data_bytes"]


def test_require_version_passes_v1_and_refuses_v2(real_shape: Path) -> None:
    assert require_version(real_shape, expected="v1") == "v1"
    assert require_version(build.real_assistant_config(), expected="v1") == "v1"
    from dflash2_ckpt import VersionMismatchError

    with pytest.raises(VersionMismatchError):
        require_version(real_shape, expected="v2")


def test_detection_is_by_structure_not_by_name() -> None:
    cfg = build.real_assistant_config()
    renamed = dict(cfg, architectures=["SomeOtherAssistantModel"], model_type="other_assistant")
    assert detect(renamed).dialect == "assistant"
    anonymous = dict(cfg, architectures=["Whatever"], model_type="whatever")
    assert detect(anonymous).version is None  # nothing says assistant
    assert detect(anonymous, ["encoder.fc.weight"]).dialect == "assistant"  # its tensors do
    missing = {k: v for k, v in cfg.items() if k != "target_layer_ids"}
    assert detect(missing).version is None
    assert detect(dict(cfg, dflash_config={"target_layer_ids": [1]})).dialect == "nested"


def test_dspark_is_still_named_not_taken_for_an_assistant() -> None:
    dspark = json.loads((FIXTURES / "real" / "deepseek-ai_dspark_qwen3_8b_block7.config.json").read_text())
    assert detect(dspark, ["encoder.fc.weight"]).other == "DSpark"


def test_encoder_names_under_the_nested_dialect_keep_df208(tmp_path: Path) -> None:
    nested = build.nested("v1")
    materialise(tmp_path / "n", nested, build.assistant_layout(nested))
    codes = [f.code for f in verify(tmp_path / "n").findings]
    assert "DF208" in codes and "DF305" not in codes


def test_assistant_checks_catch_a_bad_fc(tmp_path: Path) -> None:
    cfg = build.real_assistant_config()
    layout = [
        (n, d, (6656, 3 * 6656) if n == "encoder.fc.weight" else s)
        for n, d, s in build.assistant_layout(cfg, "BF16")
    ]
    materialise(tmp_path / "bad", cfg, layout)
    r = verify(tmp_path / "bad")
    assert any(f.code == "DF203" and f.tensor in ("encoder.fc.weight", "fc.weight") for f in r.findings), (
        r.findings
    )


def test_convert_to_nested_is_bit_exact_with_renamed_tensors(tmp_path: Path) -> None:
    r = convert(TINY, tmp_path / "nested", to="nested", target=TARGET)
    assert r.written
    out = json.loads((tmp_path / "nested" / "config.json").read_text())
    assert out["architectures"] == ["DFlashDraftModel"] and out["model_type"] == "qwen3"
    src_cfg = json.loads((TINY / "config.json").read_text())
    for k in ("target_layer_ids", "block_size", "mask_token_id"):
        assert out["dflash_config"][k] == src_cfg[k] and k not in out
    ckpt = open_checkpoint(tmp_path / "nested")
    assert (
        ckpt.detection is not None and ckpt.detection.dialect == "nested" and ckpt.detection.version == "v1"
    )
    assert "fc.weight" in ckpt.tensors and "encoder.fc.weight" not in ckpt.tensors
    assert not verify(tmp_path / "nested").failed(strict=True)
    src = open_checkpoint(TINY)
    for name in src.tensors:
        dst = {"encoder.fc.weight": "fc.weight", "encoder.output_norm_enc.weight": "hidden_norm.weight"}.get(
            name, name
        )
        assert (
            hashlib.sha256(tensor_bytes(TINY, name)).digest()
            == hashlib.sha256(tensor_bytes(tmp_path / "nested", dst)).digest()
        ), name


def test_convert_to_flat_writes_speculators_v1(tmp_path: Path) -> None:
    convert(TINY, tmp_path / "flat", to="flat", target=TARGET)
    out = json.loads((tmp_path / "flat" / "config.json").read_text())
    assert out["speculators_model_type"] == "dflash" and out["architectures"] == ["DFlashDraftModel"]
    src_cfg = json.loads((TINY / "config.json").read_text())
    assert out["aux_hidden_state_layer_ids"] == [t + 1 for t in src_cfg["target_layer_ids"]]
    assert out["transformer_layer_config"]["model_type"] == "qwen3"
    assert not verify(tmp_path / "flat").failed(strict=True)
    # and back: the nested form equals the direct conversion's drafter
    convert(tmp_path / "flat", tmp_path / "back", to="nested", target=TARGET)
    convert(TINY, tmp_path / "direct", to="nested", target=TARGET)
    a, b = open_checkpoint(tmp_path / "back").spec, open_checkpoint(tmp_path / "direct").spec
    assert a is not None and b is not None
    from dflash2_ckpt.convert.exactness import drafter_differences

    assert drafter_differences(b, a) == []


def test_real_shape_converts_sparse(real_shape: Path, tmp_path: Path) -> None:
    glimmer = json.loads((FIXTURES / "real" / "z-lab_Muse-Glimmer-30B-DFlash2.config.json").read_text())
    target = tmp_path / "target"
    target.mkdir()
    (target / "config.json").write_text(
        json.dumps({"vocab_size": glimmer["vocab_size"], "num_hidden_layers": glimmer["num_target_layers"]})
    )
    r = convert(real_shape, tmp_path / "nested", to="nested", target=target)
    assert r.counts()["rename"] == 2 and r.bytes_copied == sum(
        t.nbytes for t in open_checkpoint(real_shape).tensors.values()
    )
    assert (tmp_path / "nested" / "model.safetensors").stat().st_blocks * 512 < 1 << 20  # still holes


def test_cli_verify_names_the_dialect() -> None:
    res = invoke_cli(main, ["verify", str(TINY), "--format", "json"])
    data = json.loads(res.output)
    assert res.exit_code == 0 and data["summary"]["dialect"] == "assistant"


def test_guard_uses_tensor_names_too(tmp_path: Path) -> None:
    cfg = dict(build.real_assistant_config(), architectures=["Whatever"], model_type="whatever")
    materialise(tmp_path / "a", cfg, build.assistant_layout(build.real_assistant_config(), "BF16"))
    assert require_version(tmp_path / "a", expected="v1") == "v1"


def test_pairing_and_causality_run_on_the_assistant(tmp_path: Path) -> None:
    assert not verify(TINY, target=TARGET).failed(strict=True)
    wrong = tmp_path / "t"
    wrong.mkdir()
    cfg = json.loads((TARGET / "config.json").read_text())
    (wrong / "config.json").write_text(json.dumps(dict(cfg, hidden_size=48, vocab_size=100)))
    codes = [f.code for f in verify(TINY, target=wrong).findings]
    assert "DF502" in codes
    assert "DF501" not in codes  # no vocab_size of its own: the drafter takes the target's
    # causality: sliding layers without is_causal: vLLM 0.33 gives the assistant model type dflash_config.causal
    # = false (0.31-0.32 ran them causal), as the transformers class the export is saved from runs them
    c = dict(
        json.loads((TINY / "config.json").read_text()),
        layer_types=["sliding_attention"] * 2,
        sliding_window=16,
    )
    c.pop("is_causal", None)
    materialise(tmp_path / "a", c, build.assistant_layout(build.nested("v1")))
    spec = open_checkpoint(tmp_path / "a").spec
    assert spec is not None and spec.dialect == "assistant"
    from dflash2_ckpt.engines.registry import all_engines

    assert all_engines(spec) == {
        "vllm": (False, False),
        "vllm-legacy": None,
        "speculators": None,
        "sglang": None,
    }


# ---- the published export has no vocab_size: the target's vocabulary, or the bound its ids give


def test_the_fixture_records_no_vocab_size_like_the_published_export() -> None:
    assert "vocab_size" not in json.loads((TINY / "config.json").read_text())
    assert "vocab_size" not in build.real_assistant_config()


def test_verify_without_a_target_warns_and_judges_with_the_bound_of_its_ids() -> None:
    r = invoke("verify", str(TINY), "--format", "json")
    doc = json.loads(r.output)
    assert r.exit_code == 0
    [note] = [f for f in doc["findings"] if f["code"] == "DF120"]
    assert note["severity"] == "warning" and "--target" in note["message"]
    cfg = json.loads((TINY / "config.json").read_text())
    assert doc["summary"]["geometry"]["vocab_size"] == max(cfg["mask_token_id"], cfg["eos_token_id"]) + 1
    assert invoke("verify", str(TINY), "--strict").exit_code == 1


def test_verify_with_a_target_takes_its_vocabulary(tmp_path: Path) -> None:
    big = tmp_path / "t"
    big.mkdir()
    (big / "config.json").write_text(
        json.dumps(dict(json.loads((TARGET / "config.json").read_text()), vocab_size=100))
    )
    doc = json.loads(invoke("verify", str(TINY), "--target", str(big), "--format", "json").output)
    assert doc["summary"]["geometry"]["vocab_size"] == 100
    assert [f["severity"] for f in doc["findings"] if f["code"] == "DF120"] == ["info"]


def test_compat_judges_the_published_layout() -> None:
    doc = json.loads(invoke("compat", str(TINY), "--format", "json").output)
    verdicts = {(e["engine"], e["versions"]): e["verdict"] for e in doc["engines"]}
    assert verdicts[("vllm", ">=0.29,<0.31")] == verdicts[("vllm", ">=0.34")] == "loads"
    advice = [r["message"] for e in doc["engines"] for r in e["reasons"] if r["code"] == "DF801"]
    assert advice and all("--target" in m for m in advice)


def test_convert_asks_for_the_target_and_writes_its_vocab_size(tmp_path: Path) -> None:
    r = invoke("convert", str(TINY), "--to", "nested", "-o", str(tmp_path / "n"))
    assert r.exit_code == 2 and "--target" in r.output and not (tmp_path / "n").exists()
    r = invoke("convert", str(TINY), "--to", "nested", "-o", str(tmp_path / "n"), "--target", str(TARGET))
    assert r.exit_code == 0, r.output
    out = json.loads((tmp_path / "n" / "config.json").read_text())
    assert out["vocab_size"] == json.loads((TARGET / "config.json").read_text())["vocab_size"]
    assert invoke("verify", str(tmp_path / "n"), "--strict", "--target", str(TARGET)).exit_code == 0
