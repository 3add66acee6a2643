"""DF4xx: in-block causality of every layer under each judged engine's rule, and where they part
(docs/contract.md#in-block-causality).

The engines judged are the profiles verify was given: by default the newest profile of each engine that
supports this drafter's version, so a DFlash2 checkpoint is never judged by a pre-DFlash2 rule.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from ..engines import Drafter, Profile, exllamav3, newest_supporting
from ..engines.causality import intended
from ..findings import Finding
from ..formats.spec import DraftSpec

if TYPE_CHECKING:
    from .context import CheckContext

EMITS: frozenset[str] = frozenset({"DF401", "DF402", "DF403", "DF404"})


def judged_profiles(ctx: CheckContext) -> tuple[Profile, ...]:
    """The profiles named in the options, else the newest of each engine that has this drafter's version."""
    if ctx.options.engines:
        return ctx.options.engines
    det = ctx.checkpoint.detection
    return newest_supporting(det.version if det else None)


def check(ctx: CheckContext) -> list[Finding]:
    """Only for a spec with one layer type per layer (DF108 reports the other case)."""
    spec = ctx.spec
    if spec is None or len(spec.layer_types) != spec.num_hidden_layers:
        return []
    return causality_findings(spec, judged_profiles(ctx)) + tap_findings(ctx)


def tap_findings(ctx: CheckContext) -> list[Finding]:
    """DF404, where exllamav3 is named (`--engine exllamav3`): the layers it taps against vLLM's. Not by
    default: every DFlash v1 drafter without a pinned tap_shift has it, and only exllamav3 users need the pin."""

    named = [p for p in ctx.options.engines if p.engine == exllamav3.ENGINE]
    spec = ctx.spec
    if not named or spec is None or spec.dialect not in named[0].reads:
        return []
    det = ctx.checkpoint.detection
    d = Drafter(
        dialect=spec.dialect,
        version=det.version if det else None,
        spec=spec,
        config=ctx.checkpoint.config or {},
    )
    shift = exllamav3.tap_shift(d)
    if shift == 0:
        return []
    ids = list(spec.target_layer_ids)
    taps = [t + shift for t in ids]
    pinned = exllamav3.pinned_shift(d.config)
    why = (
        f"dflash_config.tap_shift = {shift}"
        if pinned is not None
        else f"{exllamav3.architecture(d.config)}'s default tap_shift of {shift}, tuned on some published checkpoints"
    )
    return [
        Finding(
            "DF404",
            f"{named[0].title} taps the outputs of target layers {taps} ({why}); vLLM, SGLang "
            f"and the z-lab reference tap {ids}: one of them feeds the drafter other hidden states than it "
            "was trained on. Pin dflash_config.tap_shift: 0 to make exllamav3 tap what vLLM taps",
            field="dflash_config.tap_shift",
            details={"engine": named[0].id, "tap_shift": shift, "exllamav3_taps": taps, "vllm_taps": ids},
        )
    ]


def _layers(ids: Sequence[int], n: int) -> str:
    if len(ids) == n:
        return "every layer"
    return "layer" + ("s " if len(ids) > 1 else " ") + ", ".join(map(str, ids))


def _word(causal: bool) -> str:
    return "causal" if causal else "bidirectional"


def _names(profiles: Sequence[Profile]) -> str:
    return ", ".join(p.title for p in profiles) or "none of the judged engines"


def _resolved(spec: DraftSpec, profiles: Sequence[Profile]) -> list[tuple[Profile, tuple[bool, ...]]]:
    out = []
    for p in profiles:
        if spec.dialect not in p.reads:
            continue  # e.g. llama.cpp: the GGUF converter writes the resolved causality explicitly
        values = p.causality(spec) if p.causality is not None else None
        if values is not None:
            out.append((p, values))
    return out


def causality_findings(spec: DraftSpec, profiles: Sequence[Profile]) -> list[Finding]:
    out = []
    keys = spec.causality
    want = intended(spec)
    resolved = _resolved(spec, profiles)
    n = spec.num_hidden_layers
    if keys.is_causal is not None and keys.dflash_causal is not None and keys.is_causal != keys.dflash_causal:
        first = [p for p, v in resolved if v == (keys.is_causal,) * n]
        second = [p for p, v in resolved if v == (keys.dflash_causal,) * n]
        out.append(
            Finding(
                "DF402",
                f"is_causal = {str(keys.is_causal).lower()} but dflash_config.causal = "
                f"{str(keys.dflash_causal).lower()}: {_names(first)} follow the first; "
                + (
                    f"{_names(second)} the second"
                    if second
                    else "no engine judged here follows the second, but vLLM before 0.28 did (DFlash v1) and "
                    "converters copy either"
                )
                + ". Make them equal",
                field="is_causal",
                details={
                    "is_causal": keys.is_causal,
                    "dflash_config.causal": keys.dflash_causal,
                    "follow_is_causal": [p.id for p in first],
                    "follow_dflash_causal": [p.id for p in second],
                },
            )
        )
    sliding = [i for i, t in enumerate(spec.layer_types) if t == "sliding_attention"]
    unstated = (
        keys.is_causal is None and keys.dflash_causal is None and keys.sliding_window_non_causal is None
    )
    if spec.version == "v2" and spec.dialect == "nested" and unstated and sliding:
        causal_on = [p for p, v in resolved if any(v[i] for i in sliding)]
        # engines that default the other way (mlx-vlm 0.7: is_causal defaults to false) are named here rather
        # than in a DF401 whose fix would contradict this one: the missing key is the one problem
        bidir = [p for p, v in resolved if not any(v[i] for i in sliding)]
        out.append(
            Finding(
                "DF403",
                f"no is_causal and no dflash_config.causal: {_names(causal_on)} run "
                f"{_layers(sliding, n)} causal inside the block (sliding => causal)"
                + (f", {_names(bidir)} bidirectional" if bidir else "")
                + ", while DFlash2 "
                "drafters are trained bidirectional (speculators' dflash2 default; every z-lab release "
                "states is_causal: false). Set is_causal to the value the drafter was trained with",
                field="is_causal",
                details={
                    "layers": sliding,
                    "engines": [p.id for p in causal_on],
                    "bidirectional_engines": [p.id for p in bidir],
                },
            )
        )
        return out
    reader = "speculators" if spec.dialect == "flat" else "the z-lab reference"
    for p, values in resolved:
        diff = [i for i, (a, b) in enumerate(zip(values, want)) if a != b]
        if not diff:
            continue
        became = "/".join(sorted({_word(values[i]) for i in diff}))
        trained = "/".join(sorted({_word(want[i]) for i in diff}))
        out.append(
            Finding(
                "DF401",
                f"{p.title} would run {_layers(diff, n)} {became}, but {reader} reads {trained}: the drafter still "
                f"emits plausible tokens and only acceptance drops. {_fix(spec, want)}",
                field=spec.path("is_causal")
                if spec.dialect == "nested"
                else spec.path("sliding_window_non_causal"),
                details={
                    "engine": p.id,
                    "layers": diff,
                    "engine_causal": list(values),
                    "intended_causal": list(want),
                },
            )
        )
    return out


def _fix(spec: DraftSpec, want: tuple[bool, ...]) -> str:
    uniform = len(set(want)) == 1
    if spec.dialect == "nested" and uniform:
        v = str(want[0]).lower()
        return f"Fix: set is_causal: {v} and dflash_config.causal: {v} explicitly"
    if spec.dialect == "flat":
        if spec.causality.sliding_window_non_causal is None:
            return (
                "Fix: set sliding_window_non_causal explicitly (vLLM reads an absent key as true, speculators "
                f"{'dflash2' if spec.version == 'v2' else 'dflash'} as {str(spec.version == 'v2').lower()})"
            )
        return (
            "vLLM's flat loader applies one causality to all layers; serve the nested conversion with an "
            "explicit per-layer layer_types instead"
        )
    return "Fix: give every layer the same causality, or serve with an engine that reads layer_types"
