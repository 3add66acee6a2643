"""Per-layer causality under each engine's rule (docs/contract.md#in-block-causality) and the
engine-aware DF4xx findings."""

from __future__ import annotations

import pytest

from conftest import real_config
from dflash2_ckpt.checks.causality import causality_findings
from dflash2_ckpt.engines import newest_supporting, resolve
from dflash2_ckpt.engines.causality import intended as intended_causality
from dflash2_ckpt.engines.registry import all_engines
from dflash2_ckpt.formats.parse import to_spec
from dflash2_ckpt.formats.spec import CausalityKeys

S, F = "sliding_attention", "full_attention"
V2 = newest_supporting("v2")


def spec(dialect: str, types: list, **keys):
    base, _ = to_spec(real_config("z-lab_Qwen3.8-27B-DFlash2"))
    return base.with_(
        dialect=dialect,
        num_hidden_layers=len(types),
        layer_types=tuple(types),
        causality=CausalityKeys(**keys),
    )


def test_q27_rules() -> None:
    s, _ = to_spec(real_config("z-lab_Qwen3.8-27B-DFlash2"))
    e = all_engines(s)
    assert e["vllm"] == (False,) * 5 and e["sglang"] == (False,) * 5
    assert e["vllm-legacy"] == (True,) * 5 and e["speculators"] is None


@pytest.mark.parametrize(
    "keys,vllm,legacy,sglang",
    [
        ({}, (True, False), (True, False), (True, False)),
        ({"is_causal": False}, (False, False), (True, False), (False, False)),
        ({"is_causal": True}, (True, True), (True, False), (True, True)),
        ({"dflash_causal": False}, (False, False), (False, False), (True, False)),
        ({"is_causal": True, "dflash_causal": False}, (True, True), (False, False), (True, True)),
    ],
)
def test_nested_rules(keys, vllm, legacy, sglang) -> None:
    e = all_engines(spec("nested", [S, F], **keys))
    assert (e["vllm"], e["vllm-legacy"], e["sglang"]) == (vllm, legacy, sglang)


# vLLM's speculators loader: dflash_config.causal = not config.get("sliding_window_non_causal", True), so an
# absent key is bidirectional for v1 too; speculators' own default is true for dflash2, false for dflash.
@pytest.mark.parametrize(
    "swnc,version,specs,vllm",
    [
        (True, "v2", (False, False), (False, False)),
        (False, "v2", (True, False), (True, True)),
        (None, "v2", (False, False), (False, False)),  # both default to non-causal
        (None, "v1", (True, False), (False, False)),  # speculators v1 default false; vLLM's absent = true
    ],
)
def test_flat_rules(swnc, version, specs, vllm) -> None:
    s = spec("flat", [S, F], sliding_window_non_causal=swnc).with_(version=version)
    e = all_engines(s)
    assert e["speculators"] == specs and e["vllm"] == vllm
    # vLLM < 0.28 maps the flat config the same way (vllm==0.27.1 algos.py update_dflash)
    assert e["sglang"] is None and e["vllm-legacy"] == vllm
    assert intended_causality(s) == specs


def test_flat_v1_without_the_key_warns_that_vllm_runs_it_bidirectional() -> None:
    s = spec("flat", [S, S]).with_(version="v1")
    [f] = causality_findings(s, newest_supporting("v1"))
    assert f.code == "DF401" and f.details["engine"] == "vllm>=0.34"
    assert f.details["engine_causal"] == [False, False] and f.details["intended_causal"] == [True, True]
    assert "sliding_window_non_causal explicitly" in f.message


def test_explicit_agreeing_keys_produce_no_finding() -> None:
    assert causality_findings(spec("nested", [S, S], is_causal=False, dflash_causal=False), V2) == []
    assert causality_findings(spec("nested", [F, F]), V2) == []


def test_q27_is_not_judged_by_the_pre_dflash2_rule_by_default() -> None:
    s, _ = to_spec(real_config("z-lab_Qwen3.8-27B-DFlash2"))
    assert causality_findings(s, V2) == []
    [f] = causality_findings(s, [resolve("vllm@0.27.0")])  # named explicitly: the old rule applies
    assert (
        f.code == "DF401"
        and f.details["engine"] == "vllm>=0.26,<0.28"
        and f.details["layers"] == [0, 1, 2, 3, 4]
    )
    assert "dflash_config.causal: false" in f.message


def test_conflicting_keys_name_the_engines_that_follow_each() -> None:
    found = causality_findings(spec("nested", [S, S], is_causal=True, dflash_causal=False), V2)
    [f402] = [f for f in found if f.code == "DF402"]
    assert (
        "vllm>=0.34" in f402.details["follow_is_causal"]
        and "sglang>=0.5.19" in f402.details["follow_is_causal"]
    )
    # the engines that load it agree (is_causal wins); dflash-mlx refuses is_causal: true, so runs nothing
    assert [f for f in found if f.code == "DF401"] == []


def test_dflash_causal_true_over_full_layers_names_sglang() -> None:
    # dflash_config.causal: true with full-attention (bidirectional) layers: vLLM / z-lab run causal, SGLang
    # ignores dflash_config.causal and runs them bidirectional
    found = causality_findings(spec("nested", [F, F], dflash_causal=True), V2)
    engines = {f.details["engine"] for f in found if f.code == "DF401"}
    assert "sglang>=0.5.19" in engines and "vllm>=0.34" not in engines


def test_no_causality_key_on_dflash2_sliding_layers_is_df403() -> None:
    found = causality_findings(spec("nested", [S, S]), V2)
    [f] = [f for f in found if f.code == "DF403"]
    assert f.severity == "warning"
    assert {"vllm>=0.34", "sglang>=0.5.19", "z-lab>=0.1.0"} <= set(f.details["engines"])
    assert "dflash-mlx>=0.1.0" not in f.details["engines"]  # DFlash v1 only: it cannot run a DFlash2 drafter


def test_flat_mixed_layers_name_the_layers_vllm_flattens() -> None:
    [f] = causality_findings(spec("flat", [S, F], sliding_window_non_causal=False), V2)
    assert f.details["engine"] == "vllm>=0.34" and f.details["layers"] == [1]


def test_the_conversion_loaders_come_from_the_engine_profiles() -> None:
    """One list of engines: the loaders a conversion keeps exact are read off the profiles."""
    from dflash2_ckpt.engines.registry import LOADERS, by_engine

    assert set(LOADERS) == {"vllm", "vllm-legacy", "sglang", "speculators"}
    for name, rule in LOADERS.items():
        assert rule in {p.causality for p in by_engine(name.removesuffix("-legacy"))}
    assert LOADERS["vllm"] is by_engine("vllm")[-1].causality
    assert LOADERS["vllm-legacy"] is [p for p in by_engine("vllm") if p.conversion_loader][0].causality
