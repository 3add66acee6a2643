"""The committed good fixtures in both directions, and causality cases that only one direction can state."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_convert_refusals import p

from _kit.convert import build, flat_config, tensor_bytes
from conftest import FIXTURES
from dflash2_ckpt.checkpoint import open_checkpoint
from dflash2_ckpt.checkpoint.tokenizer import tokenizer_fingerprint
from dflash2_ckpt.convert import convert
from dflash2_ckpt.engines.registry import all_engines
from dflash2_ckpt.errors import ConversionError
from dflash2_ckpt.findings import Finding
from dflash2_ckpt.usecases.verify import verify

TARGET = FIXTURES / "targets" / "tiny-target"


@pytest.mark.parametrize("name", ["nested-v1", "nested-v2", "flat-v1", "flat-v2"])
def test_good_fixture_round_trip(tmp_path: Path, name: str) -> None:
    src = FIXTURES / "good" / name
    there, back = ("flat", "nested") if name.startswith("nested") else ("nested", "flat")
    r = convert(src, tmp_path / "mid", to=there, target=TARGET, verifier_name="tiny/target")  # type: ignore[arg-type]
    convert(
        tmp_path / "mid",
        tmp_path / "back",
        to=back,
        target=TARGET,  # type: ignore[arg-type]
        verifier_name="tiny/target",
        verifier_architectures=("Qwen3ForCausalLM",),
    )
    assert r.tensors_verified == len(tensor_bytes(src))
    for d in ("mid", "back"):
        assert not verify(tmp_path / d, target=TARGET).failed()
    want = json.loads((src / "config.json").read_text())
    if there == "nested":
        # going nested learns the target's layer count (--target), and the flat dialect carries it from then on
        want["num_target_layers"] = 4
    # converting with --target records its tokenizer (checkpoint/tokenizer.py), at the root in both dialects
    want["dflash2_ckpt_tokenizer_sha256"] = tokenizer_fingerprint(TARGET)  # the spec keeps it as an extra
    assert json.loads((tmp_path / "back" / "config.json").read_text()) == want
    back_spec, src_spec = open_checkpoint(tmp_path / "back").spec, open_checkpoint(src).spec
    assert back_spec is not None and src_spec is not None
    key = "dflash2_ckpt_tokenizer_sha256"
    back_spec = back_spec.with_(
        drafter_extra={k: v for k, v in back_spec.drafter_extra.items() if k != key},
        transformer_extra={k: v for k, v in back_spec.transformer_extra.items() if k != key},
    )
    assert back_spec == src_spec.with_(num_target_layers=back_spec.num_target_layers)
    assert tensor_bytes(tmp_path / "back") == tensor_bytes(src)


def test_flat_mixed_causality_goes_nested_but_not_back(tmp_path: Path) -> None:
    """sliding_window_non_causal: false over sliding + full layers: speculators runs the sliding layer causal
    and the full one bidirectional. The nested default rule states exactly that, so nothing explicit is
    written; the way back is refused because vLLM's flat loader would flatten it."""
    cfg = flat_config(p(layer_types=["sliding_attention", "full_attention"], causal=True))
    src = build(tmp_path / "src", cfg)
    r = convert(src, tmp_path / "nested", to="nested")
    out = json.loads((tmp_path / "nested" / "config.json").read_text())
    assert "is_causal" not in out and "causal" not in out["dflash_config"]
    assert any("per-layer" in n for n in r.notes)
    nested = open_checkpoint(tmp_path / "nested").spec
    speculators = all_engines(open_checkpoint(src).spec)["speculators"]
    assert speculators == (True, False)
    assert all(v == speculators for v in all_engines(nested).values() if v is not None)
    with pytest.raises(ConversionError, match="mixed per-layer causality"):
        convert(
            tmp_path / "nested",
            tmp_path / "flat",
            to="flat",
            verifier_name="a/b",
            verifier_architectures=("Qwen3ForCausalLM",),
        )


def test_zlab_style_causality_is_made_explicit_for_old_engines(tmp_path: Path) -> None:
    """The published 27B form (all sliding, is_causal: false only): old vLLM would run every layer causal.
    After nested -> flat -> nested both keys are explicit and every engine agrees."""
    from _kit.convert import nested_config

    cfg = nested_config(p())
    del cfg["dflash_config"]["causal"]
    src = build(tmp_path / "src", cfg)
    assert all_engines(open_checkpoint(src).spec)["vllm-legacy"] == (True, True)
    convert(
        src, tmp_path / "flat", to="flat", verifier_name="a/b", verifier_architectures=("Qwen3ForCausalLM",)
    )
    convert(tmp_path / "flat", tmp_path / "nested", to="nested")
    spec = open_checkpoint(tmp_path / "nested").spec
    assert spec.causality.is_causal is False and spec.causality.dflash_causal is False
    assert all(v == (False, False) for v in all_engines(spec).values() if v is not None)


def test_null_transformer_architectures_is_dropped(tmp_path: Path) -> None:
    cfg = flat_config(p())
    cfg["transformer_layer_config"]["architectures"] = None
    src = build(tmp_path / "src", cfg)
    r = convert(src, tmp_path / "out", to="nested")
    assert any(
        c.src == "transformer_layer_config.architectures" and c.action == "dropped" for c in r.config_changes
    )
    assert json.loads((tmp_path / "out" / "config.json").read_text())["architectures"] == [
        "DFlash2DraftModel"
    ]


def test_one_verification_of_the_source_per_conversion(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """convert verifies the source once and plans, refuses and compares from that one report."""
    from dflash2_ckpt.checks import suite

    runs: list[tuple[str, str]] = []

    def counted(name: str, family: suite.Family) -> suite.Family:
        def run(ctx: suite.CheckContext) -> list[Finding]:
            runs.append((ctx.checkpoint.label, name))
            return family(ctx)

        return run

    monkeypatch.setattr(suite, "FAMILIES", tuple((n, counted(n, f)) for n, f in suite.FAMILIES))
    src = FIXTURES / "good" / "nested-v2"
    convert(src, tmp_path / "out", to="flat", target=TARGET, verifier_name="tiny/target")
    on_source = [name for label, name in runs if label == str(src)]
    assert sorted(on_source) == sorted(name for name, _ in suite.FAMILIES)  # each family once
    assert {label for label, _ in runs} - {str(src)}, "the written output is verified too"
