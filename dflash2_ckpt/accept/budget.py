"""Before an accept run loads anything: the memory the pair will take, and a refusal above the budget.

The target is loaded whole by transformers (BF16 on CUDA, float32 on the CPU: accept/target.py); its
parameter count comes from its config.json (embedding, head unless tied, attention and MLP per layer).
The drafter runs in float32 (smoke.drafting) with the target's embedding and head beside it. Arithmetic
on two configs, like the smoke's budget (smoke/budget.py, whose runtime figure and machine budget it
shares): a refusal costs nothing and prints what would fit, where the kernel would kill the run.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..checks.pairing import target_text_config
from ..errors import BudgetError
from ..formats.spec import DraftSpec
from ..smoke.budget import RUNTIME_BYTES, gib, selector_params, trunk_params

F32 = 4


def _int(cfg: Mapping[str, Any], key: str, default: int = 0) -> int:
    v = cfg.get(key)
    return v if isinstance(v, int) and not isinstance(v, bool) and v > 0 else default


def target_params(config: Mapping[str, Any]) -> int:
    """Parameters of a decoder-only target from its config (the language model of a multimodal one)."""
    c = target_text_config(config)
    h, v, layers = _int(c, "hidden_size"), _int(c, "vocab_size"), _int(c, "num_hidden_layers")
    inter = _int(c, "intermediate_size", 4 * h)
    heads = _int(c, "num_attention_heads", 1)
    hd = _int(c, "head_dim", h // heads if heads else h)
    kv = _int(c, "num_key_value_heads", heads)
    experts = _int(c, "num_experts", _int(c, "num_local_experts", 1))
    moe_inter = _int(c, "moe_intermediate_size", inter)
    mlp = 3 * h * (moe_inter * experts if experts > 1 else inter)
    per_layer = h * (heads * hd + 2 * kv * hd) + heads * hd * h + mlp + 2 * h
    head = 0 if c.get("tie_word_embeddings") is True else v * h
    return v * h + head + layers * per_layer + h


def accept_parts(
    spec: DraftSpec, target_config: Mapping[str, Any], *, device_type: str, runtime: int = RUNTIME_BYTES
) -> dict[str, int]:
    target_dtype = 2 if device_type == "cuda" else F32
    return {
        "target parameters": target_params(target_config) * target_dtype,
        "drafter parameters (float32)": (trunk_params(spec) + selector_params(spec)) * F32,
        "drafter's embedding and head (float32)": 2 * spec.vocab_size * spec.hidden_size * F32,
        "runtime (torch, transformers)": runtime,
    }


def check_accept_budget(
    spec: DraftSpec, target_root: Path, budget: int, *, device_type: str, runtime: int = RUNTIME_BYTES
) -> dict[str, int]:
    """The estimate by part; raises BudgetError, before anything is loaded, when it is over `budget`."""

    try:
        cfg = json.loads((target_root / "config.json").read_text())
    except (OSError, ValueError):
        return {}  # load_target reports an unreadable target itself
    if not isinstance(cfg, dict):
        return {}
    parts = accept_parts(spec, cfg, device_type=device_type, runtime=runtime)
    need = sum(parts.values())
    if need <= budget:
        return parts
    biggest = max(parts.items(), key=lambda kv: kv[1])
    ways = ["run on a GPU (--device cuda), where the target loads in BF16"] if device_type != "cuda" else []
    ways.append(f"a machine with more than {gib(need)} free, then --max-memory above {gib(need)}")
    raise BudgetError(
        f"accept would need about {gib(need)} ({biggest[0]}: {gib(biggest[1])}), over the "
        f"{gib(budget)} budget; nothing was loaded",
        hint="; ".join(ways),
    )
