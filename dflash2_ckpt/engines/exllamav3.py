"""exllamav3 1.6.5, as its released Python code reads a drafter (released_exl.py cites each fact).

Four DFlash architectures, each picked by config.json's `architectures`: DFlashDraftModel (v1),
DFlash2DraftModel (v2), MuseGlimmerAssistantModel (the assistant export, a v1 drafter with encoder.* names)
and DFlashLagunaForCausalLM. What sets it apart from vLLM:

- causality: top-level is_causal, else dflash_config.is_causal (which no other engine reads); unset, sliding
  layers are causal and the others bidirectional. dflash_config.causal is not read (Laguna excepted: it
  reads dflash_config.causal only, default causal).
- taps: it exports the output of layer j; DFlashDraftModel shifts the checkpoint's ids one layer deeper
  (`tap_shift = 1`, tuned on some published checkpoints), DFlash2 and the assistant use them raw;
  `dflash_config.tap_shift` (else a top-level `tap_shift`) pins the shift per checkpoint.
- a speculators (flat) config names DFlashDraftModel too but keeps its geometry under
  transformer_layer_config: the top-level hidden_size read raises (the loader's TODO).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..formats.spec import DraftSpec
from . import released_exl as r
from .attention_keys import ignores_sinks, ignores_use_swa, ignores_v_scale
from .causality import CausalRule
from .profile import (
    Causality,
    Default,
    Drafter,
    DraftTokens,
    Fact,
    KeyRead,
    Profile,
    QuantOutcome,
    Refusal,
    TapOffset,
)
from .profile import fact as _fact
from .versions import at_least

ENGINE = "exllamav3"
RANK = 70
LAGUNA = "DFlashLagunaForCausalLM"
# DFlashDraftModel's config class declares tap_shift = 1, DFlash2's and the assistant's 0; the checkpoint pins
# its own with dflash_config.tap_shift, else a top-level tap_shift (read in that order)
TAPS_OFFSET = TapOffset(
    v1=1,
    v2=0,
    key="dflash_config.tap_shift",
    also_key="tap_shift",
    archs=(("MuseGlimmerAssistantModel", 0), (LAGUNA, 0)),
)


def _dflash_config(config: Mapping[str, Any]) -> Mapping[str, Any]:
    dc = config.get("dflash_config")
    return dc if isinstance(dc, dict) else {}


def _int(v: Any) -> int | None:
    return v if isinstance(v, int) and not isinstance(v, bool) else None


def architecture(config: Mapping[str, Any]) -> str | None:
    archs = config.get("architectures")
    return archs[0] if isinstance(archs, list) and len(archs) == 1 and isinstance(archs[0], str) else None


def pinned_shift(config: Mapping[str, Any]) -> int | None:
    """The checkpoint's own tap_shift: dflash_config.tap_shift, else the top-level one (the order it reads)."""
    for value in (_dflash_config(config).get("tap_shift"), config.get("tap_shift")):
        if value is not None:
            return _int(value)
    return None


def tap_shift(d: Drafter) -> int:
    """Layers deeper than target_layer_ids that exllamav3 taps this drafter at."""
    return TAPS_OFFSET.of(d.version, d.config)


def effective_taps(d: Drafter) -> list[int] | None:
    if d.spec is None:
        return None
    shift = tap_shift(d)
    return [t + shift for t in d.spec.target_layer_ids]


# is_causal, else dflash_config.is_causal; unset, sliding layers causal and the rest bidirectional
# (block_window; prepare_inputs sets the kernel's causal flag only for is_causal true); no layer_types: all full
_DFLASH_RULE = CausalRule(
    ("is_causal", "dflash_config.is_causal"), dialects=frozenset({"nested", "assistant"})
)
# Laguna's config class reads dflash_config.causal alone, default causal (DFlashLagunaConfig.dflash_causal)
_LAGUNA_RULE = CausalRule(("dflash_config.causal",), default="causal", dialects=frozenset({"nested"}))


def is_laguna(spec: DraftSpec) -> bool:
    """A Laguna drafter, as far as the spec tells (it keeps model_type and the gating key, not the architecture)."""
    return spec.transformer_extra.get("model_type") == "laguna" or "gating" in spec.transformer_extra


def causality(spec: DraftSpec) -> Causality | None:
    return _LAGUNA_RULE(spec) if is_laguna(spec) else _DFLASH_RULE(spec)


CAUSALITY_TEXT = f"{_DFLASH_RULE.text}; Laguna: {_LAGUNA_RULE.text}"


def _laguna(d: Drafter) -> str | None:
    """What DFlashLagunaConfig asserts (each a ValueError or AssertionError at load)."""
    if architecture(d.config) != LAGUNA:
        return None
    cfg, out = d.config, []
    if cfg.get("gating") != "per-head":
        out.append(f"gating is {cfg.get('gating')!r}, it asserts 'per-head'")
    types = cfg.get("layer_types")
    if isinstance(types, list) and len(set(map(str, types))) > 1:
        out.append("layer_types is not uniform")
    vocab, draft = cfg.get("vocab_size"), cfg.get("draft_vocab_size")
    if draft is not None and draft != vocab:
        out.append(f"draft_vocab_size {draft} differs from vocab_size {vocab}")
    eagle = cfg.get("eagle_aux_hidden_state_layer_ids")
    if eagle is not None and d.spec is not None and eagle != [i + 1 for i in d.spec.target_layer_ids]:
        out.append("eagle_aux_hidden_state_layer_ids is not dflash_config.target_layer_ids + 1")
    return "; ".join(out) or None


def quant(modules: Mapping[str, str]) -> list[QuantOutcome]:
    """A linear loads an EXL3 trellis, else a dense .weight (fp8 with its scales is dequantized); a packed
    compressed-tensors or MLX module has neither and raises."""
    out = []
    for m, s in sorted(modules.items()):
        if s.lower().startswith("fp8"):
            continue
        out.append(
            QuantOutcome(
                m,
                s,
                "fails",
                f"{m} is {s}: exllamav3 loads EXL3 (trellis) or dense .weight "
                "tensors, so it raises 'No tensors found for ... matching supported quantization "
                "format' (or reads a packed .weight as a dense matrix); quantize with exllamav3's "
                "own converter from the dense drafter instead",
                str(r.EXL_NO_FORMAT),
            )
        )
    return out


def _required(d: Drafter) -> str | None:
    """Keys read without a default: a missing one raises 'Missing any of the following keys'."""
    cfg, dc = d.config, _dflash_config(d.config)
    missing = [
        k
        for k in (
            "hidden_size",
            "num_attention_heads",
            "intermediate_size",
            "rms_norm_eps",
            "num_hidden_layers",
        )
        if cfg.get(k) is None
    ]
    for key in ("mask_token_id", "target_layer_ids", "block_size"):
        if dc.get(key) is None and cfg.get(key) is None:
            missing.append(f"dflash_config.{key}")
    if d.version == "v2":
        missing += [
            f"dflash_config.{k}"
            for k in ("selector_rank", "selector_top_k")
            if dc.get(k) is None and cfg.get(k) is None
        ]
        if cfg.get("vocab_size") is None:
            missing.append("vocab_size (selector_top_k is compared with it)")
    return f"it reads {', '.join(missing)} without a default and raises" if missing else None


def _activation(d: Drafter) -> str | None:
    act = d.config.get("hidden_act")
    return None if act in (None, "silu") else f"hidden_act is {act!r}; it asserts 'silu' (ValueError)"


def _taps(d: Drafter) -> str | None:
    """DF840: the layers it taps are not the ones vLLM, SGLang and the z-lab reference tap."""
    if d.spec is None or d.dialect not in ("nested", "assistant"):
        return None
    shift = tap_shift(d)
    if shift == 0:
        return None
    ids = list(d.spec.target_layer_ids)
    taps = [t + shift for t in ids]
    why = (
        f"dflash_config.tap_shift = {shift}"
        if pinned_shift(d.config) is not None
        else f"{architecture(d.config)}'s default tap_shift of {shift}"
    )
    n = d.spec.num_target_layers
    beyond = [t for t in taps if n is not None and t >= n]
    past = (
        f"; {', '.join(map(str, beyond))} is past the target's last layer ({n - 1})"
        if beyond and n is not None
        else ""
    )
    return (
        f"taps the outputs of target layers {taps} ({why}) where vLLM, SGLang and the z-lab reference tap "
        f"{ids}{past}: the drafter is fed other hidden states than those engines feed it. Pin "
        "dflash_config.tap_shift: 0 to tap what vLLM taps "
        f"(`dflash2-ckpt verify {d.path} --engine exllamav3 --fix --unsafe-fixes` writes it)"
    )


TAPS = Refusal(
    "taps", _taps, "; ".join(map(str, (r.EXL_TAP_SHIFT_V1, r.EXL_TAP_SHIFT_KEY, r.EXL_TAP_APPLIED))), "DF840"
)
# its 2048 window for a null or absent sliding_window needs no rule of its own: sliding layers without a
# window are DF109 for every engine, so the default is listed (defaults) and never reached


def _v2_only(rule: Refusal) -> Refusal:
    """The DFlash2 model reads the keys (its config subclasses DFlash v1's) but builds none of it."""
    return Refusal(rule.name, lambda d: rule.check(d) if d.version == "v2" else None, rule.source, rule.code)


MASK_EMBEDDING = _fact(
    "a stored mask_embedding tensor replaces the target's embedding row of mask_token_id "
    "(DFlash v1 and the assistant export; the DFlash2 model does not load it)",
    r.EXL_MASK_EMBEDDING,
    r.EXL_MASK_EMBEDDING_USED,
    r.EXL_V2_NO_MASK_EMBEDDING,
)

# tensors beyond the drafter's layers that this engine reads, for the checks that name their readers
TENSOR_READERS: dict[str, Fact] = {"mask_embedding": MASK_EMBEDDING}

SOURCES = (
    _fact(
        "DFlash v1 (DFlashDraftModel), DFlash2 (DFlash2DraftModel), the Muse-Glimmer assistant export "
        "(MuseGlimmerAssistantModel, encoder.* names) and Laguna (DFlashLagunaForCausalLM), each picked by "
        "config.json's architectures",
        r.EXL_V1,
        r.EXL_V2,
        r.EXL_ASSISTANT,
        r.EXL_LAGUNA,
        r.EXL_REGISTERED,
        r.EXL_ARCH_PICKS,
        r.EXL_ASSISTANT_KEYS,
    ),
    _fact(
        "causality: top-level is_causal, else dflash_config.is_causal; unset, sliding layers causal and the "
        "others bidirectional; dflash_config.causal is never read",
        r.EXL_CAUSAL,
        r.EXL_CAUSAL_WINDOW,
        r.EXL_CAUSAL_FLAG,
        r.EXL_CAUSAL_FLAG_V2,
        r.EXL_NO_DFLASH_CAUSAL,
        r.EXL_NO_DFLASH_CAUSAL_V2,
    ),
    _fact(
        "taps: DFlashDraftModel taps target_layer_ids + 1 (tap_shift = 1, found empirically, per checkpoint), "
        "DFlash2 and the assistant export the ids as written; dflash_config.tap_shift, else tap_shift, pins it",
        r.EXL_TAP_SHIFT_V1,
        r.EXL_TAP_SHIFT_KEY,
        r.EXL_TAP_APPLIED,
        r.EXL_TAP_PER_CHECKPOINT,
        r.EXL_TAP_SHIFT_V2,
        r.EXL_TAP_SHIFT_ASSISTANT,
        r.EXL_TAPS_UNIQUE,
    ),
    _fact(
        "keys: dflash_config first, else the top level, for mask_token_id and target_layer_ids; block_size from "
        "the top level first; no default for any of them",
        r.EXL_MASK,
        r.EXL_TAPS_KEY,
        r.EXL_BLOCK,
        r.EXL_HIDDEN_REQUIRED,
        r.EXL_MISSING_KEY,
    ),
    _fact(
        "defaults: layer_types all full_attention, sliding_window 2048 (a null value counts as absent), "
        "rope_theta 10000",
        r.EXL_LAYER_TYPES,
        r.EXL_WINDOW,
        r.EXL_NULL_IS_MISSING,
        r.EXL_ROPE_THETA,
    ),
    _fact(
        "DFlash v1 builds attention sinks from dflash_config.attention_sink_bias (else the top-level keys, else "
        "when layers.0.self_attn.attention_sink_bias is stored) and folds attention_value_scale into o_proj; "
        "DFlash2 builds neither",
        r.EXL_SINKS,
        r.EXL_SINKS_TENSOR,
        r.EXL_V_SCALE,
        r.EXL_V_SCALE_APPLIED,
        r.EXL_V2_NO_SINKS,
        r.EXL_V2_NO_V_SCALE,
    ),
    MASK_EMBEDDING,
    _fact(
        "DFlash2 reads input_embedding_scale, output_multiplier and final_logit_softcapping (dflash_config "
        "first), requires selector_rank / selector_top_k and a top-level vocab_size not below selector_top_k",
        r.EXL_V2_SCALES,
        r.EXL_V2_MULTIPLIER,
        r.EXL_V2_SOFTCAP,
        r.EXL_V2_SELECTOR,
        r.EXL_V2_CONV_DEFAULTS,
        r.EXL_V2_TOP_K,
        r.EXL_V2_KERNEL,
        r.EXL_V2_GROUP,
        r.EXL_VOCAB_READ,
        r.EXL_V2_VOCAB,
        r.EXL_V2_TAPS_IN_TARGET,
    ),
    _fact(
        "Laguna: per-head softplus output gate (gating must be 'per-head'), uniform layer_types, "
        "draft_vocab_size equal to vocab_size, fused qkv_proj and per-tap aux_hidden_norms, taps used raw, causal "
        "unless dflash_config.causal is false",
        r.EXL_LAGUNA_GATING,
        r.EXL_LAGUNA_UNIFORM,
        r.EXL_LAGUNA_VOCAB,
        r.EXL_LAGUNA_EAGLE,
        r.EXL_LAGUNA_FUSED,
        r.EXL_LAGUNA_AUX_NORMS,
        r.EXL_LAGUNA_RAW_TAPS,
        r.EXL_LAGUNA_CAUSAL,
        r.EXL_LAGUNA_NO_IS_CAUSAL,
    ),
    _fact(
        "a speculators (flat) config is read as DFlashDraftModel and raises on the missing top-level "
        "hidden_size (its loader's TODO: 'Support DFlash models trained in Speculators')",
        r.EXL_FLAT_TODO,
        r.EXL_HIDDEN_REQUIRED,
        r.EXL_MISSING_KEY,
    ),
    _fact(
        "each linear loads an EXL3 trellis, else a dense .weight converted to fp16 (fp8 scales dequantized), "
        "else raises",
        r.EXL_LOAD_ORDER,
        r.EXL_TRELLIS,
        r.EXL_TO_FP16,
        r.EXL_FP8_SCALES,
        r.EXL_NO_FORMAT,
    ),
)

NOTES = (
    _fact(
        "no server in the wheel: a Python program passes the drafter as draft_model (with a draft_cache) to "
        "exllamav3's Generator; scripts built on its model_init take it as -dm / --draft_model_dir",
        r.EXL_GENERATOR,
        r.EXL_DRAFT_ARGS,
    ),
    _fact("bf16 tensors are converted to fp16 on load", r.EXL_TO_FP16),
)

PROFILE = Profile(
    engine=ENGINE,
    label="exllamav3",
    versions=at_least("1.6.5", "release"),
    drafts=frozenset({"v1", "v2"}),
    reads=frozenset({"nested", "assistant"}),
    version_by="architecture: DFlashDraftModel v1, DFlash2DraftModel v2 (a config class per architecture)",
    causality=causality,
    causality_text=CAUSALITY_TEXT,
    taps="target_layer_ids + tap_shift (DFlashDraftModel 1, DFlash2 and the assistant 0; dflash_config.tap_shift "
    "pins it)",
    draft_tokens=DraftTokens(
        "num_draft_tokens", lambda b: b - 1, "block_size - 1", f"{r.EXL_DRAFT_SIZE}; {r.EXL_DRAFT_TOKENS}"
    ),
    sources=SOURCES,
    notes=NOTES,
    requires=(Refusal("required keys", _required, f"{r.EXL_MISSING_KEY}; {r.EXL_BLOCK}", "DF803"),),
    constraints=(
        Refusal("hidden_act", _activation, str(r.EXL_ACT)),
        Refusal(
            "laguna",
            _laguna,
            "; ".join(
                map(str, (r.EXL_LAGUNA_GATING, r.EXL_LAGUNA_UNIFORM, r.EXL_LAGUNA_VOCAB, r.EXL_LAGUNA_EAGLE))
            ),
        ),
    ),
    defaults=(
        Default("block_size", None, str(r.EXL_BLOCK), reads=("block_size", "dflash_config.block_size")),
        Default(
            "mask_token_id", None, str(r.EXL_MASK), reads=("dflash_config.mask_token_id", "mask_token_id")
        ),
        Default(
            "target_layer_ids",
            None,
            str(r.EXL_TAPS_KEY),
            reads=("dflash_config.target_layer_ids", "target_layer_ids"),
        ),
        Default("rope_theta", 10000.0, str(r.EXL_ROPE_THETA), why="RoPE runs at another base than trained"),
    ),
    quant=quant,
    ignores=(
        ignores_use_swa(r.EXL_NO_USE_SWA, r.EXL_NO_USE_SWA_V2),
        _v2_only(ignores_sinks(r.EXL_V2_NO_SINKS)),
        _v2_only(ignores_v_scale(r.EXL_V2_NO_V_SCALE, dialects=("nested",))),
    ),
    divergences=(TAPS,),
    families=("laguna",),
    tap_offset=TAPS_OFFSET,
    read_keys=(
        *(
            KeyRead(
                f"{where}tap_shift",
                "how many layers deeper than target_layer_ids it taps "
                "(dflash_config first; DFlashDraftModel defaults to 1, DFlash2 to 0)",
                (r.EXL_TAP_SHIFT_KEY, r.EXL_TAP_APPLIED),
                checked="DF404 (verify --engine exllamav3) and compat's DF840",
            )
            for where in ("dflash_config.", "")
        ),
        KeyRead(
            "dflash_config.is_causal",
            "the draft block's causality for every layer where the top-level "
            "is_causal is absent (no other engine reads it)",
            (r.EXL_CAUSAL,),
            checked="verify's DF401 and compat judge exllamav3's causality with it",
        ),
        KeyRead(
            "attention_value_scale",
            "the V scale folded into o_proj when dflash_config's is absent",
            (r.EXL_V_SCALE, r.EXL_V_SCALE_APPLIED),
            only="v1",
        ),
        KeyRead(
            "gating", "Laguna's attention output gate; anything but 'per-head' raises", (r.EXL_LAGUNA_GATING,)
        ),
    ),
)

PROFILES = (PROFILE,)

# compat on every fixtures/real config, checked by hand against the cited code (tests/engines/test_golden.py)
GOLDEN = (
    ("z-lab_Qwen3.8-27B-DFlash2", PROFILE.id, "loads", ("DF810", "DF810", "DF810")),  # tap_shift 0, is_causal
    ("z-lab_Muse-Glimmer-30B-DFlash2", PROFILE.id, "loads", ("DF810", "DF810", "DF810")),  # reads the scales
    (
        "z-lab_Qwen3-4B-DFlash-b16",
        PROFILE.id,
        "degraded",
        ("DF840", "DF810", "DF810", "DF810"),
    ),  # taps ids + 1
    (
        "speculators-0.9.0_tiny-dflash2",
        PROFILE.id,
        "needs-conversion",
        ("DF801",),
    ),  # flat: no top-level hidden_size
    ("deepseek-ai_dspark_qwen3_8b_block7", PROFILE.id, "unsupported", ("DF800",)),  # not a DFlash drafter
)
