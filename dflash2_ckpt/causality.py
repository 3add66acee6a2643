"""Per-layer in-block causality by engine name, for convert and smoke (CONTRACT §4).

The rules live in engines/causality.py, one per rule, and the profiles point at them; this module keeps
the short names convert and smoke use. A value of None means the engine does not load this dialect.
"""
from __future__ import annotations

from typing import Callable, Literal

from .engines import causality as rules
from .formats.spec import DraftSpec

Engine = Literal["vllm", "vllm-legacy", "speculators", "sglang"]
ENGINES: tuple[Engine, ...] = ("vllm", "vllm-legacy", "speculators", "sglang")
_RULES: dict[Engine, Callable[[DraftSpec], tuple[bool, ...] | None]] = {
    "vllm": rules.zlab, "vllm-legacy": rules.vllm_legacy, "speculators": rules.speculators, "sglang": rules.sglang,
}


def layer_causality(spec: DraftSpec, engine: Engine) -> tuple[bool, ...] | None:
    """True = causal inside the block, False = bidirectional, per draft layer."""
    return _RULES[engine](spec)


def intended_causality(spec: DraftSpec) -> tuple[bool, ...]:
    return rules.intended(spec)


def all_engines(spec: DraftSpec) -> dict[Engine, tuple[bool, ...] | None]:
    if spec.dialect == "gguf":     # none of these engines loads a GGUF file (llama.cpp does)
        return {e: None for e in ENGINES}
    return {e: layer_causality(spec, e) for e in ENGINES}
