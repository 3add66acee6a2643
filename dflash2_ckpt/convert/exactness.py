"""What "exact" means for a conversion: causality that every engine of the destination reads the same
way, and a drafter whose every semantic field survives (docs/contract.md#nested-and-flat-field-by-field,
#in-block-causality).

The writers in configs.py decide where keys go; this module decides whether the result still describes
the same drafter, and refuses (ConversionError) when the destination dialect cannot say it.
"""

from __future__ import annotations

from typing import Any

from ..engines.causality import intended as intended_causality
from ..engines.causality import speculators
from ..errors import ConversionError
from ..formats.keys import OWN_KEYS
from ..formats.spec import DraftSpec
from ..quant.config import CONFIG_KEYS

# top level in both dialects (convert/quant.py, checkpoint/tokenizer.py): compared wherever they sit
ROOT_KEYS = frozenset(CONFIG_KEYS) | OWN_KEYS

# Fields that define the drafter; a conversion must carry each one unchanged.
SEMANTIC_FIELDS = (
    "version",
    "hidden_size",
    "intermediate_size",
    "num_hidden_layers",
    "num_attention_heads",
    "num_key_value_heads",
    "head_dim",
    "vocab_size",
    "target_layer_ids",
    "layer_types",
    "rms_norm_eps",
    "hidden_act",
    "attention_bias",
    "sliding_window",
    "rope_theta",
    "rope_scaling",
    "max_position_embeddings",
    "target_hidden_size",
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

# Keys a writer owns (derives, regenerates or drops by rule); every other extra key is "unknown" and
# must arrive in the destination with its value untouched.
WRITER_KEYS = frozenset(
    {
        "architectures",
        "auto_map",
        "speculators_config",
        "speculators_version",
        "speculators_model_type",
        "draft_vocab_size",
        "sample_from_anchor",
        "dtype",
        "torch_dtype",
        "transformers_version",
        "tie_word_embeddings",
        "model_type",
        # the assistant writer pins exllamav3's tap shift; the meaning check compares the taps exllamav3 then reads
        "tap_shift",
    }
)


def _word(causal: bool) -> str:
    return "causal" if causal else "bidirectional"


def nested_causality_for_flat(spec: DraftSpec) -> bool:
    """sliding_window_non_causal that makes speculators and vLLM's flat loader read the nested drafter's
    intended per-layer causality; refuses when no value can."""
    _check_layer_types(spec)
    intended = intended_causality(spec)
    if not any(intended):
        return True  # all bidirectional: full layers always are, sliding ones need the flag
    if all(intended):
        full = [i for i, t in enumerate(spec.layer_types) if t != "sliding_attention"]
        if full:
            raise ConversionError(
                f"the drafter runs every layer causal, but layer(s) {full} are full_attention: speculators "
                "always runs full-attention layers bidirectional, so the flat dialect cannot express this",
                hint="convert only drafters whose causal layers are sliding_attention, or keep the nested dialect",
            )
        return False
    causal = [i for i, c in enumerate(intended) if c]
    raise ConversionError(
        f"mixed per-layer causality (causal layers {causal}, the others bidirectional): vLLM's flat loader "
        "applies one causality to every layer and would silently flatten it",
        hint="keep the nested dialect for this drafter; it states causality per layer",
    )


def flat_causality_for_nested(spec: DraftSpec) -> tuple[bool | None, str]:
    """Explicit is_causal for the nested config (None: the per-layer default already matches), and a note."""
    _check_layer_types(spec)
    per = speculators(spec)
    assert per is not None
    if len(set(per)) == 1:
        return per[0], f"every layer {_word(per[0])} (from sliding_window_non_causal), written explicitly"
    return None, (
        "per-layer causality (sliding layers causal, full layers bidirectional) is the nested "
        "default rule, so no explicit is_causal is written; vLLM's flat loader would have "
        "flattened it to one value"
    )


def _check_layer_types(spec: DraftSpec) -> None:
    if len(spec.layer_types) != spec.num_hidden_layers:
        raise ConversionError(
            f"layer_types has {len(spec.layer_types)} entries for num_hidden_layers = {spec.num_hidden_layers}; "
            "per-layer causality is undefined, so no exact conversion exists",
            hint="fix layer_types first",
        )


def effective_dtype(spec: DraftSpec) -> Any:
    # speculators keeps dtype at the top level, outside transformer_layer_config
    return spec.dtype or spec.drafter_extra.get("dtype") or spec.drafter_extra.get("torch_dtype")


def unknown_keys(spec: DraftSpec) -> dict[str, Any]:
    """Keys no spec field models and no writer owns, with their values (their level is the dialect's)."""
    out: dict[str, Any] = {}
    for k, v in [*spec.transformer_extra.items(), *spec.drafter_extra.items()]:
        if k in ROOT_KEYS:
            out["root:" + k] = v
    for k, v in spec.transformer_extra.items():
        if k not in WRITER_KEYS and k not in ROOT_KEYS:
            out["transformer:" + k] = v
    for k, v in spec.drafter_extra.items():
        if k not in WRITER_KEYS and k not in ROOT_KEYS:
            out["drafter:" + k] = v
    return out


def drafter_differences(a: DraftSpec, b: DraftSpec) -> list[str]:
    """Every way b describes a different drafter than a; empty when the conversion was exact."""
    out = []
    for name in SEMANTIC_FIELDS:
        va, vb = getattr(a, name), getattr(b, name)
        if va != vb:
            out.append(f"{name}: {va!r} became {vb!r}")
    if a.num_target_layers is not None and a.num_target_layers != b.num_target_layers:
        out.append(f"num_target_layers: {a.num_target_layers} became {b.num_target_layers}")
    if effective_dtype(a) != effective_dtype(b):
        out.append(f"dtype: {effective_dtype(a)!r} became {effective_dtype(b)!r}")
    if len(a.layer_types) == a.num_hidden_layers and intended_causality(a) != intended_causality(b):
        out.append(f"per-layer causality: {list(intended_causality(a))} became {list(intended_causality(b))}")
    ua, ub = unknown_keys(a), unknown_keys(b)
    for k in sorted(set(ua) | set(ub)):
        if ua.get(k, ...) != ub.get(k, ...):
            out.append(
                f"unknown key {k.split(':', 1)[1]}: {ua.get(k, '<absent>')!r} became "
                f"{ub.get(k, '<absent>')!r}"
            )
    return out
