"""Property: nested -> flat -> nested and flat -> nested -> flat give back the same config, DraftSpec,
unknown keys and byte-identical tensor files, over generated drafters; and `verify` passes each output."""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from _kit.convert import TARGET_LAYERS, build, drafters, flat_config, nested_config, target_dir, tensor_bytes
from dflash2_ckpt.checkpoint import open_checkpoint
from dflash2_ckpt.convert import convert
from dflash2_ckpt.convert.exactness import drafter_differences
from dflash2_ckpt.engines.causality import intended as intended_causality
from dflash2_ckpt.engines.registry import all_engines
from dflash2_ckpt.usecases.verify import verify

SETTINGS = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _roundtrip(p: dict[str, Any], first: str, seed: int, shards: int) -> None:
    work = Path(tempfile.mkdtemp(prefix="dflash2-rt-"))
    try:
        cfg = nested_config(p) if first == "flat" else flat_config(p)
        dtype = "BF16" if p["dtype"] == "bfloat16" else "F32"
        src = build(work / "src", cfg, seed=seed, shards=shards, dtype=dtype)
        target = target_dir(work / "target")
        second = "nested" if first == "flat" else "flat"
        r1 = convert(src, work / "mid", to=first, target=target, verifier_name="tiny/target")  # type: ignore[arg-type]
        r2 = convert(
            work / "mid",
            work / "back",
            to=second,
            target=target,  # type: ignore[arg-type]
            verifier_name="tiny/target",
            verifier_architectures=("Qwen3ForCausalLM",),
        )
        assert r1.written and r2.written and r1.counts()["drop"] == 0
        for d in ("mid", "back"):
            report = verify(work / d)
            assert not report.failed(), [f.message for f in report.findings]
        # the same config, key for key, hence the same DraftSpec and the same unknown keys
        # (a flat source learns the target's layer count going nested, and carries it back: num_target_layers)
        learned = (
            {"num_target_layers": TARGET_LAYERS}
            if first == "nested" and "num_target_layers" not in cfg
            else {}
        )
        assert json.loads((work / "back" / "config.json").read_text()) == {**cfg, **learned}
        a, b, mid = open_checkpoint(src), open_checkpoint(work / "back"), open_checkpoint(work / "mid")
        assert a.spec is not None and b.spec is not None
        assert a.spec.with_(**learned) == b.spec
        assert drafter_differences(a.spec, mid.spec) == []
        assert intended_causality(mid.spec) == intended_causality(a.spec)
        # every engine that reads the intermediate dialect runs the intended causality
        for engine, values in all_engines(mid.spec).items():
            assert values is None or values == intended_causality(a.spec), engine
        # byte-identical tensor data, in the same shards; the files themselves come out identical
        assert tensor_bytes(src) == tensor_bytes(work / "back") == tensor_bytes(work / "mid")
        for f in src.glob("*.safetensors"):
            assert (work / "back" / f.name).read_bytes() == f.read_bytes()
        if shards > 1:
            assert (
                json.loads((work / "back" / "model.safetensors.index.json").read_text())["weight_map"]
                == json.loads((src / "model.safetensors.index.json").read_text())["weight_map"]
            )
    finally:
        shutil.rmtree(work, ignore_errors=True)


@SETTINGS
@given(drafters(), st.integers(0, 2**31), st.sampled_from([1, 1, 2, 3]))
def test_nested_flat_nested(p: dict[str, Any], seed: int, shards: int) -> None:
    _roundtrip(p, "flat", seed, shards)


@SETTINGS
@given(drafters(), st.integers(0, 2**31), st.sampled_from([1, 1, 2, 3]))
def test_flat_nested_flat(p: dict[str, Any], seed: int, shards: int) -> None:
    _roundtrip(p, "nested", seed, shards)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(drafters(), st.sampled_from(["none", "is_causal", "causal", "legacy"]))
def test_noncanonical_nested_is_exact_then_fixed_point(p: dict[str, Any], form: str) -> None:
    """z-lab style sources (only is_causal, no keys at all, old top-level block_size / mask): the first
    round trip keeps the drafter exactly (semantic fields, causality, unknown keys); the second is a fixed point."""
    cfg = nested_config(p)
    dc = cfg["dflash_config"]
    if form == "none":
        # no causality keys: the per-layer default (sliding => causal); mixed types are refused elsewhere
        assume(len(set(p["layer_types"])) == 1)
        del cfg["is_causal"], dc["causal"]
    elif form == "is_causal":
        del dc["causal"]
    elif form == "causal":
        del cfg["is_causal"]
    else:
        cfg["block_size"] = dc.pop("block_size")
        cfg["mask_token_id"] = dc.pop("mask_token_id")
        cfg["tie_word_embeddings"] = True
    work = Path(tempfile.mkdtemp(prefix="dflash2-nc-"))
    try:
        src = build(work / "src", cfg)
        target = target_dir(work / "target")
        convert(src, work / "f1", to="flat", target=target)
        convert(work / "f1", work / "n1", to="nested", target=target)
        convert(work / "n1", work / "f2", to="flat", target=target)
        convert(work / "f2", work / "n2", to="nested", target=target)
        a, n1 = open_checkpoint(src), open_checkpoint(work / "n1")
        assert drafter_differences(a.spec, n1.spec) == []
        assert (work / "n2" / "config.json").read_text() == (work / "n1" / "config.json").read_text()
        assert (work / "f2" / "config.json").read_text() == (work / "f1" / "config.json").read_text()
        assert tensor_bytes(src) == tensor_bytes(work / "n2")
    finally:
        shutil.rmtree(work, ignore_errors=True)
