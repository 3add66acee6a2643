"""What "the same drafter" means across HF and GGUF: every field the GGUF metadata can carry, compared
after the conventions that differ (tap ids + 1, float32 keys, causality as one flag or the per-layer
default, an implicit target hidden size). Used by both conversion directions to refuse an inexact result.
"""

from __future__ import annotations

import numpy as np

from ..engines.causality import intended as intended_causality
from ..formats.spec import DraftSpec

# fields the GGUF metadata stores (docs/engines.md, GGUF); num_target_layers, dtype and unknown keys it
# does not
FIELDS = (
    "version",
    "hidden_size",
    "intermediate_size",
    "num_hidden_layers",
    "num_attention_heads",
    "num_key_value_heads",
    "head_dim",
    "vocab_size",
    "target_layer_ids",
    "rms_norm_eps",
    "attention_bias",
    "sliding_window",
    "rope_theta",
    "mask_token_id",
    "block_size",
    "conv_kernel_size",
    "conv_group_size",
    "selector_rank",
    "selector_top_k",
    "input_embedding_scale",
    "output_multiplier",
    "final_logit_softcapping",
)


# stored as float32 keys: equal when they round to the same float32
F32_FIELDS = frozenset(
    {"rms_norm_eps", "rope_theta", "input_embedding_scale", "output_multiplier", "final_logit_softcapping"}
)


def _same(name: str, a: object, b: object) -> bool:
    if name in F32_FIELDS and isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return bool(np.float32(a) == np.float32(b))
    return a == b


def _scaling(spec: DraftSpec) -> dict[str, object]:
    return {
        ("rope_type" if k == "type" else k): (float(np.float32(v)) if isinstance(v, float) else v)
        for k, v in (spec.rope_scaling or {}).items()
    }


def gguf_differences(hf: DraftSpec, gg: DraftSpec) -> list[str]:
    """Every way the GGUF-side spec describes a different drafter than the HF one; empty when exact."""
    out = [
        f"{name}: {getattr(hf, name)!r} became {getattr(gg, name)!r}"
        for name in FIELDS
        if not _same(name, getattr(hf, name), getattr(gg, name))
    ]
    if (hf.target_hidden_size or hf.hidden_size) != (gg.target_hidden_size or gg.hidden_size):
        out.append(f"target_hidden_size: {hf.target_hidden_size} became {gg.target_hidden_size}")
    if all(t is not None for t in hf.layer_types) and hf.layer_types != gg.layer_types:
        out.append(f"layer_types: {list(hf.layer_types)} became {list(gg.layer_types)}")
    if (
        len(hf.layer_types) == hf.num_hidden_layers
        and len(gg.layer_types) == gg.num_hidden_layers
        and intended_causality(hf) != intended_causality(gg)
    ):
        out.append(
            f"per-layer causality: {list(intended_causality(hf))} became {list(intended_causality(gg))}"
        )
    if _scaling(hf) != _scaling(gg):
        out.append(f"rope scaling: {dict(hf.rope_scaling or {})} became {dict(gg.rope_scaling or {})}")
    if hf.max_position_embeddings and hf.max_position_embeddings != gg.max_position_embeddings:
        out.append(
            f"max_position_embeddings: {hf.max_position_embeddings} became {gg.max_position_embeddings}"
        )
    return out
