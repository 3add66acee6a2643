"""Per-layer causality under each engine's rule (CONTRACT §4)."""
from __future__ import annotations

import pytest

from dflash2_ckpt.causality import all_engines, disagreements, intended_causality
from dflash2_ckpt.checks.causality import causality_findings
from dflash2_ckpt.formats.parse import to_spec
from dflash2_ckpt.formats.spec import CausalityKeys

from conftest import real_config

S, F = "sliding_attention", "full_attention"


def spec(dialect: str, types: list, **keys):
    base, _ = to_spec(real_config("z-lab_Qwen3.8-27B-DFlash2"))
    return base.with_(dialect=dialect, num_hidden_layers=len(types), layer_types=tuple(types),
                      causality=CausalityKeys(**keys))


def test_q27_rules() -> None:
    s, _ = to_spec(real_config("z-lab_Qwen3.8-27B-DFlash2"))
    e = all_engines(s)
    assert e["vllm"] == (False,) * 5 and e["sglang"] == (False,) * 5
    assert e["vllm-legacy"] == (True,) * 5 and e["speculators"] is None


@pytest.mark.parametrize("keys,vllm,legacy,sglang", [
    ({}, (True, False), (True, False), (True, False)),
    ({"is_causal": False}, (False, False), (True, False), (False, False)),
    ({"is_causal": True}, (True, True), (True, False), (True, True)),
    ({"dflash_causal": False}, (False, False), (False, False), (True, False)),
    ({"is_causal": True, "dflash_causal": False}, (True, True), (False, False), (True, True)),
])
def test_nested_rules(keys, vllm, legacy, sglang) -> None:
    e = all_engines(spec("nested", [S, F], **keys))
    assert (e["vllm"], e["vllm-legacy"], e["sglang"]) == (vllm, legacy, sglang)


@pytest.mark.parametrize("swnc,version,specs,vllm", [
    (True, "v2", (False, False), (False, False)),
    (False, "v2", (True, False), (True, True)),
    (None, "v2", (False, False), (False, False)),    # v2 default true
    (None, "v1", (True, False), (True, True)),       # v1 default false
])
def test_flat_rules(swnc, version, specs, vllm) -> None:
    s = spec("flat", [S, F], sliding_window_non_causal=swnc).with_(version=version)
    e = all_engines(s)
    assert e["speculators"] == specs and e["vllm"] == vllm
    assert e["sglang"] is None and e["vllm-legacy"] is None
    assert intended_causality(s) == specs


def test_explicit_agreeing_keys_produce_no_finding() -> None:
    assert causality_findings(spec("nested", [S, S], is_causal=False, dflash_causal=False)) == []
    assert disagreements(spec("nested", [F, F])) == []


def test_conflicting_keys_are_df402_and_df401() -> None:
    codes = sorted(f.code for f in causality_findings(spec("nested", [S, S], is_causal=True, dflash_causal=False)))
    assert codes == ["DF401", "DF402"]


def test_flat_mixed_layers_name_the_layers_vllm_flattens() -> None:
    [f] = causality_findings(spec("flat", [S, F], sliding_window_non_causal=False))
    assert f.details["engine"] == "vllm" and f.details["layers"] == [1]
