"""Per-layer in-block causality under each engine's rule (CONTRACT §4).

A value of None means the engine does not load this dialect at all.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from .formats.spec import DraftSpec

Engine = Literal["vllm", "vllm-legacy", "speculators", "sglang"]
ENGINES: tuple[Engine, ...] = ("vllm", "vllm-legacy", "speculators", "sglang")
ENGINE_LABELS = {
    "vllm": "vLLM (current)",
    "vllm-legacy": "vLLM before DFlash2 support",
    "speculators": "speculators",
    "sglang": "SGLang",
}


def _sliding_default(spec: DraftSpec) -> tuple[bool, ...]:
    # sliding => causal; full-attention and untyped layers => bidirectional
    return tuple(t == "sliding_attention" for t in spec.layer_types)


def _all(spec: DraftSpec, value: bool) -> tuple[bool, ...]:
    return (value,) * spec.num_hidden_layers


def layer_causality(spec: DraftSpec, engine: Engine) -> tuple[bool, ...] | None:
    """True = causal inside the block, False = bidirectional, per draft layer."""
    keys = spec.causality
    if spec.dialect == "flat":
        if engine == "speculators":
            # sliding_window_non_causal makes sliding layers bidirectional; full layers always are.
            # Its default is true for v2 and false for v1 (CONTRACT §3).
            swnc = keys.sliding_window_non_causal
            if swnc is None:
                swnc = spec.version == "v2"
            return tuple((t == "sliding_attention") and not swnc for t in spec.layer_types)
        if engine == "vllm":
            swnc = keys.sliding_window_non_causal
            if swnc is None:
                swnc = spec.version == "v2"
            return _all(spec, not swnc)  # vLLM's flat loader: one global causal = not value
        return None  # SGLang and older vLLM read only the nested dialect
    if engine == "speculators":
        return None
    if spec.dialect == "assistant" and engine != "vllm":
        return None  # only current vLLM routes the assistant export to a DFlash model (formats/assistant.py)
    if engine == "vllm":
        if keys.is_causal is not None:
            return _all(spec, keys.is_causal)
        if keys.dflash_causal is not None:
            return _all(spec, keys.dflash_causal)
        return _sliding_default(spec)
    if engine == "vllm-legacy":
        if keys.dflash_causal is not None:
            return _all(spec, keys.dflash_causal)
        return _sliding_default(spec)
    # sglang
    if keys.is_causal is not None:
        return _all(spec, keys.is_causal)
    return _sliding_default(spec)


def intended_causality(spec: DraftSpec) -> tuple[bool, ...]:
    """What the checkpoint means: the reference reader of its own dialect (vLLM/z-lab for nested,
    speculators for flat, the trainer that wrote it)."""
    engine: Engine = "speculators" if spec.dialect == "flat" else "vllm"
    result = layer_causality(spec, engine)
    assert result is not None
    return result


def all_engines(spec: DraftSpec) -> dict[Engine, tuple[bool, ...] | None]:
    return {e: layer_causality(spec, e) for e in ENGINES}


@dataclass(frozen=True)
class Disagreement:
    engine: Engine
    layers: tuple[int, ...]          # layers whose causality differs from the intended one
    engine_values: tuple[bool, ...]


def disagreements(spec: DraftSpec) -> list[Disagreement]:
    intended = intended_causality(spec)
    out = []
    for engine, values in all_engines(spec).items():
        if values is None:
            continue
        diff = tuple(i for i, (a, b) in enumerate(zip(values, intended)) if a != b)
        if diff:
            out.append(Disagreement(engine, diff, values))
    return out
