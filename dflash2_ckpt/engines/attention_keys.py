"""MiMo-style attention keys an engine release may not read (dflash_config.use_swa / swa_window_size /
attention_sink_bias): the drafter then loads and runs another attention than it was trained with.

The meaning is vLLM's DFlash (released.py VLLM_USE_SWA, VLLM_SINKS): use_swa slides every layer of an
all-full layer_types; attention_sink_bias builds one learned sink logit per head. A release that reads
neither key runs full attention without sinks: nothing raises, acceptance drops (DF815, `degraded`).
"""
from __future__ import annotations

from typing import Any, Callable

from .profile import Cite, Drafter, Refusal


def _dflash_config(d: Drafter) -> dict[str, Any]:
    dc = d.config.get("dflash_config")
    return dc if isinstance(dc, dict) else {}


def swa_everywhere(d: Drafter) -> bool:
    """vLLM's rule: use_swa turns every layer sliding when layer_types has no sliding layer (or is absent)."""
    lt = d.config.get("layer_types")
    lt = lt if isinstance(lt, list) else None
    return bool(_dflash_config(d).get("use_swa")) and (lt is None or "sliding_attention" not in lt)


def declares_sinks(d: Drafter) -> bool:
    return _dflash_config(d).get("attention_sink_bias") is True


def _use_swa(d: Drafter) -> str | None:
    if d.dialect != "nested" or not swa_everywhere(d):
        return None
    window = _dflash_config(d).get("swa_window_size") or d.config.get("sliding_window")
    return (f"does not read dflash_config.use_swa, so it runs every layer with full attention where the "
            f"drafter was trained with a sliding window of {window}")


def _sinks(d: Drafter) -> str | None:
    if d.dialect != "nested" or not declares_sinks(d):
        return None
    n = sum(1 for t in d.tensors if t.endswith((".self_attn.attention_sink_bias", ".self_attn.sinks")))
    held = f" and skips the {n} sink tensors" if n else ""
    return (f"does not read dflash_config.attention_sink_bias, so it builds no attention sinks{held}: every "
            "attention softmax runs without the learned per-head sink logit")


def _rule(name: str, check: Callable[[Drafter], str | None], cites: tuple[Cite, ...], extra: str = "") -> Refusal:
    return Refusal(name, lambda d: (lambda t: t + extra if t else None)(check(d)),
                   "; ".join(str(c) for c in cites), "DF815")


def ignores_use_swa(*cites: Cite) -> Refusal:
    return _rule("dflash_config.use_swa", _use_swa, cites)


def ignores_sinks(*cites: Cite, extra: str = "") -> Refusal:
    return _rule("dflash_config.attention_sink_bias", _sinks, cites, extra)
