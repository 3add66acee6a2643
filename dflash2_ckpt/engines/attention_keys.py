"""MiMo-style attention keys an engine release may not read (dflash_config.use_swa / swa_window_size /
attention_sink_bias / attention_value_scale): the drafter then loads and runs another attention than it was
trained with.

The meaning is vLLM's DFlash (released.py VLLM_USE_SWA, VLLM_SINKS, VLLM_V_SCALE): use_swa slides every layer
of an all-full layer_types; attention_sink_bias builds one learned sink logit per head; attention_value_scale
multiplies V before attention. A release that reads none of them runs full attention without sinks on unscaled
V: nothing raises, acceptance drops (DF815, `degraded`).

Which keys a release ignores is profile data: its `ignores` rules, named by the key's config path.
`runs_with` reads them back for the per-engine effective values (engines/effective.py).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .profile import Cite, Drafter, Profile, Refusal


def _dflash_config(d: Drafter) -> dict[str, Any]:
    dc = d.config.get("dflash_config")
    return dc if isinstance(dc, dict) else {}


def swa_everywhere(d: Drafter) -> bool:
    """vLLM's rule: use_swa turns every layer sliding when layer_types has no sliding layer (or is absent)."""
    lt = d.config.get("layer_types")
    lt = lt if isinstance(lt, list) else None
    return bool(_dflash_config(d).get("use_swa")) and (lt is None or "sliding_attention" not in lt)


def declares_sinks(d: Drafter) -> bool:
    """dflash_config.attention_sink_bias: true (nested), or a GGUF's attn_sinks tensors (formats/gguf_spec.py)."""
    extra = d.spec.drafter_extra if d.spec is not None else _dflash_config(d)
    return extra.get("attention_sink_bias") is True


def value_scale(d: Drafter) -> float | None:
    """The checkpoint's factor on V, None when it has none: dflash_config.attention_value_scale (nested), the
    same key at the top level of a flat config (where convert moves it), dflash.attention.value_scale (GGUF)."""
    v = d.spec.drafter_extra.get("attention_value_scale") if d.spec is not None else None
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None


def _use_swa(d: Drafter) -> str | None:
    if d.dialect != "nested" or not swa_everywhere(d):
        return None
    window = _dflash_config(d).get("swa_window_size") or d.config.get("sliding_window")
    return (
        f"does not read dflash_config.use_swa, so it runs every layer with full attention where the "
        f"drafter was trained with a sliding window of {window}"
    )


def _sinks(d: Drafter) -> str | None:
    if d.dialect != "nested" or not declares_sinks(d):
        return None
    n = sum(1 for t in d.tensors if t.endswith((".self_attn.attention_sink_bias", ".self_attn.sinks")))
    held = f" and skips the {n} sink tensors" if n else ""
    return (
        f"does not read dflash_config.attention_sink_bias, so it builds no attention sinks{held}: every "
        "attention softmax runs without the learned per-head sink logit"
    )


def _v_scale(d: Drafter) -> str | None:
    v = value_scale(d)
    if v is None or v == 1.0:
        return None
    where = {"nested": V_SCALE, "gguf": "dflash.attention.value_scale"}.get(
        d.dialect or "", "attention_value_scale"
    )
    return (
        f"does not read {where}, so it runs attention on unscaled V where the drafter was trained with V "
        f"multiplied by {v:g}: every attention output is off by that factor"
    )


def _rule(
    name: str, check: Callable[[Drafter], str | None], cites: tuple[Cite, ...], extra: str = ""
) -> Refusal:
    return Refusal(
        name,
        lambda d: (lambda t: t + extra if t else None)(check(d)),
        "; ".join(str(c) for c in cites),
        "DF815",
    )


def ignores_use_swa(*cites: Cite) -> Refusal:
    return _rule("dflash_config.use_swa", _use_swa, cites)


def ignores_sinks(*cites: Cite, extra: str = "") -> Refusal:
    return _rule("dflash_config.attention_sink_bias", _sinks, cites, extra)


def ignores_v_scale(
    *cites: Cite, extra: str = "", dialects: tuple[str, ...] = ("nested", "flat", "gguf")
) -> Refusal:
    """`dialects`: where the release loses the key (vLLM 0.31+ reads it from the nested config only)."""
    return _rule(V_SCALE, lambda d: _v_scale(d) if d.dialect in dialects else None, cites, extra)


V_SCALE = "dflash_config.attention_value_scale"
SINKS = "dflash_config.attention_sink_bias"
# what a release that ignores the key runs with: no sinks, V unscaled
_IGNORED_AS = {SINKS: False, V_SCALE: 1.0}


def runs_with(p: Profile, d: Drafter) -> dict[str, dict[str, Any]]:
    """Per attention key (sinks, V scale): the checkpoint's value and the one this release runs with, from the
    profile's `ignores` rules; `source` is the rule's citation where the release ignores the key."""
    rules = {r.name: r for r in p.ignores}
    own = {SINKS: declares_sinks(d), V_SCALE: value_scale(d) or 1.0}
    out = {}
    for key, value in own.items():
        rule = rules.get(key)
        lost = rule is not None and rule.check(d) is not None
        out[key.removeprefix("dflash_config.")] = {
            "checkpoint": value,
            "engine": _IGNORED_AS[key] if lost else value,
            "ignored": lost,
            "source": rule.source if rule is not None and lost else "reads the checkpoint's value",
        }
    return out
