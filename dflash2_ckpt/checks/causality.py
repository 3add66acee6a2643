"""DF4xx: in-block causality of every layer under each engine's rule, and where they part (CONTRACT §4)."""
from __future__ import annotations

from typing import TYPE_CHECKING

from ..causality import ENGINE_LABELS, disagreements, intended_causality
from ..findings import Finding
from ..formats.spec import DraftSpec

if TYPE_CHECKING:
    from .context import CheckContext

EMITS: frozenset[str] = frozenset({"DF401", "DF402"})


def check(ctx: CheckContext) -> list[Finding]:
    """Only for a spec with one layer type per layer (DF108 reports the other case)."""
    spec = ctx.spec
    if spec is None or len(spec.layer_types) != spec.num_hidden_layers:
        return []
    return causality_findings(spec)


def _layers(ids: tuple[int, ...], n: int) -> str:
    if len(ids) == n:
        return "every layer"
    return "layer" + ("s " if len(ids) > 1 else " ") + ", ".join(map(str, ids))


def _word(causal: bool) -> str:
    return "causal" if causal else "bidirectional"


def causality_findings(spec: DraftSpec) -> list[Finding]:
    out = []
    keys = spec.causality
    intended = intended_causality(spec)
    if keys.is_causal is not None and keys.dflash_causal is not None and keys.is_causal != keys.dflash_causal:
        out.append(Finding("DF402", f"is_causal = {str(keys.is_causal).lower()} but dflash_config.causal = "
                           f"{str(keys.dflash_causal).lower()}: current vLLM follows the first, older vLLM the "
                           "second. Make them equal", field="is_causal",
                           details={"is_causal": keys.is_causal, "dflash_config.causal": keys.dflash_causal}))
    reader = "speculators" if spec.dialect == "flat" else "vLLM / the z-lab reference"
    for d in disagreements(spec):
        became = {_word(d.engine_values[i]) for i in d.layers}
        trained = {_word(intended[i]) for i in d.layers}
        fix = _fix(spec, d.engine)
        out.append(Finding(
            "DF401",
            f"{ENGINE_LABELS[d.engine]} would run {_layers(d.layers, spec.num_hidden_layers)} "
            f"{'/'.join(sorted(became))}, but {reader} reads {'/'.join(sorted(trained))}: the drafter still "
            f"emits plausible tokens and only acceptance drops. {fix}",
            field=spec.path("is_causal") if spec.dialect == "nested" else spec.path("sliding_window_non_causal"),
            details={"engine": d.engine, "layers": list(d.layers),
                     "engine_causal": list(d.engine_values), "intended_causal": list(intended)}))
    return out


def _fix(spec: DraftSpec, engine: str) -> str:
    intended = intended_causality(spec)
    uniform = len(set(intended)) == 1
    if spec.dialect == "nested" and engine == "vllm-legacy" and uniform:
        return (f"Fix: also set dflash_config.causal: {str(intended[0]).lower()} (older vLLM ignores top-level "
                "is_causal)")
    if spec.dialect == "nested" and uniform:
        return f"Fix: set is_causal: {str(intended[0]).lower()} explicitly"
    if spec.dialect == "flat":
        return ("vLLM's flat loader applies one causality to all layers; serve the nested conversion with an "
                "explicit per-layer layer_types instead")
    return "Fix: give every layer the same causality, or serve with an engine that reads layer_types"
