"""What each engine actually runs with: its causality per layer, the value of every key it may fill by
default (taps, block size, mask id, RoPE base, sample_from_anchor, causality) and the attention keys it may
ignore (attention sinks, the factor on V: attention_keys.runs_with), next to the checkpoint's own, so inspect
shows where an engine would silently diverge."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .attention_keys import runs_with
from .causality import intended
from .judge import applies, effective_value, own_value
from .layouts import anchor_reading
from .profile import Default, Drafter, Profile

KEYS = ("target_layer_ids", "block_size", "mask_token_id", "rope_theta", "sample_from_anchor")


def _plain(v: Any) -> Any:
    return list(v) if isinstance(v, tuple) else v


def _words(values: Sequence[bool] | None) -> str | None:
    if values is None:
        return None
    kinds = {"causal" if v else "bidirectional" for v in values}
    return kinds.pop() if len(kinds) == 1 else "/".join("C" if v else "B" for v in values)


def engine_view(p: Profile, d: Drafter) -> dict[str, Any]:
    spec = d.spec
    causal = p.causality(spec) if spec is not None and p.causality is not None else None
    declared = {df.key: df for df in p.defaults if applies(df, d)}
    keys: dict[str, Any] = {}
    for key in KEYS:
        df = declared.get(key, Default(key, None, "reads the checkpoint's value"))
        own = own_value(d, Default(key, None, ""))
        engine = effective_value(d, df) if spec is not None else None
        keys[key] = {
            "checkpoint": _plain(own),
            "engine": _plain(engine),
            "filled": key in declared and own_value(d, df) is None,
            "source": df.source,
        }
        rule = anchor_reading(p) if key == "sample_from_anchor" else None
        if rule is not None and rule.reads is None:
            # the engine reads no layout key for DFlash: it drafts fill-in whatever the checkpoint says
            keys[key] = {
                "checkpoint": _plain(own),
                "engine": False,
                "filled": False,
                "ignored": True,
                "source": "not read: " + "; ".join(map(str, rule.cites)),
            }
    keys["causality"] = {
        "checkpoint": _words(intended(spec)) if spec is not None else None,
        "engine": _words(causal),
        "filled": False,
        "source": p.causality_text,
    }
    for key, row in runs_with(p, d).items():  # attention_sink_bias, attention_value_scale
        keys[key] = {
            "checkpoint": row["checkpoint"],
            "engine": row["engine"],
            "filled": False,
            "source": row["source"],
        }
    return {
        "engine": p.id,
        "title": p.title,
        "causal": None if causal is None else list(causal),
        "causality_rule": p.causality_text,
        "defaults": keys,
    }


def engine_views(profiles: Sequence[Profile], d: Drafter) -> list[dict[str, Any]]:
    """Only profiles that read this dialect and have this drafter version: the others cannot run it."""
    return [engine_view(p, d) for p in profiles if d.dialect in p.reads and d.version in p.drafts]
