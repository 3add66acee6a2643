"""MLX engines, as their released wheels read a drafter (released.py cites each fact; MLX runs on Apple
hardware only, but the Python source is in the wheels).

dflash-mlx 0.1.0-0.1.8: DFlash v1 only (its DFlash2 loader is on the main branch, unreleased).
mlx-vlm: DFlash v1 from its qwen3_dflash config; DFlash2 from 0.6.16; from 0.7.0 the v1 config also
reads dflash_config.causal. Read from 0.6.0; older releases have a different config reader.
"""

from __future__ import annotations

from typing import Any

from ..formats.spec import DraftSpec
from . import mlx_weights
from . import released as r
from .attention_keys import ignores_sinks, ignores_use_swa, ignores_v_scale
from .mlx_weights import Loader
from .profile import Causality, Cite, Default, Drafter, KeyRead, Profile, Refusal
from .profile import fact as _fact
from .sglang import NUM_TARGET_LAYERS, guessed_taps
from .versions import at_least, between

RANK = 40  # engine display order (engines/registry.py)


# --- dflash-mlx -------------------------------------------------------------------------------------------
DFLASH_MLX_REQUIRED = (
    "model_type",
    "hidden_size",
    "num_hidden_layers",
    "intermediate_size",
    "num_attention_heads",
    "rms_norm_eps",
    "vocab_size",
    "num_key_value_heads",
    "max_position_embeddings",
    "rope_theta",
    "head_dim",
    "tie_word_embeddings",
    "num_target_layers",
    "block_size",
)


def _dflash_mlx_keys(d: Drafter) -> str | None:
    missing = [k for k in DFLASH_MLX_REQUIRED if k not in d.config]
    return (
        f"its model args need top-level {', '.join(missing)} (a missing one is a TypeError)"
        if missing
        else None
    )


def _strict(loader: Loader, *cites: Cite) -> Refusal:
    return Refusal(
        "strict weights", lambda d: mlx_weights.complaint(d, loader), "; ".join(map(str, cites)), "DF805"
    )


DFLASH_MLX_STRICT = _strict(
    Loader(
        "dflash-mlx",
        strips_prefix=False,
        embeds_v1=False,
        biased=True,
        note=" (0.1.8 refuses a draft lm_head first: 'contains draft-owned lm_head weights')",
    ),
    r.DFLASHMLX_LOADS,
    r.MLXLM_STRICT,
    r.MLXLM_STRICT_DEFAULT,
    r.MLX_STRICT_EXTRA,
)
DFLASH_MLX_WEIGHTS = _fact(
    "weights load through mlx-lm's load_model, strict by default, and the draft model's "
    "sanitize keeps every name: a model.-prefixed name, a target copy (it has no embedding or head), "
    "a vocabulary map or an unknown name raises; 0.1.8 refuses a draft lm_head by name first",
    r.DFLASHMLX_LOADS,
    r.DFLASHMLX_LM_HEAD,
    r.MLXLM_STRICT,
    r.MLXLM_STRICT_DEFAULT,
    r.MLX_STRICT_EXTRA,
    r.MLX_STRICT_DEFAULT,
)

DFLASH_MLX_PROFILE = Profile(
    engine="dflash-mlx",
    label="dflash-mlx",
    versions=at_least("0.1.0", "release"),
    drafts=frozenset({"v1"}),
    reads=frozenset({"nested"}),
    version_by="no DFlash2 (no conv / selector in any release)",
    causality=None,
    causality_text="not modelled (no causality key is read)",
    taps="dflash_config.target_layer_ids (0-based); guessed evenly when missing",
    draft_tokens=None,
    sources=(
        _fact(
            "DFlash v1 only: no candidate selector or conv in any release",
            r.DFLASHMLX_V1_ONLY,
            r.DFLASHMLX_ARGS,
        ),
        _fact(
            "model args are the top-level config keys; block_size and num_target_layers are required there",
            r.DFLASHMLX_REQUIRED,
            r.DFLASHMLX_FROM_DICT,
            r.DFLASHMLX_BLOCK,
        ),
        _fact(
            "mask_token_id is read from dflash_config only, default 0; taps from dflash_config.target_layer_ids, "
            "else guessed evenly",
            r.DFLASHMLX_MASK,
            r.DFLASHMLX_TAPS,
        ),
        DFLASH_MLX_WEIGHTS,
    ),
    requires=(Refusal("top-level model args", _dflash_mlx_keys, str(r.DFLASHMLX_REQUIRED), "DF803"),),
    constraints=(DFLASH_MLX_STRICT,),
    defaults=(
        Default(
            "mask_token_id",
            0,
            str(r.DFLASHMLX_MASK),
            reads=("dflash_config.mask_token_id",),
            why="a wrong mask id drafts from the wrong embedding",
        ),
        Default(
            "target_layer_ids",
            guessed_taps,
            str(r.DFLASHMLX_TAPS),
            reads=("dflash_config.target_layer_ids",),
            why="fc is fed hidden states it was not trained on",
        ),
    ),
    ignores=(
        ignores_use_swa(r.DFLASHMLX_NO_USE_SWA),
        ignores_sinks(r.DFLASHMLX_NO_SINKS),
        ignores_v_scale(r.DFLASHMLX_NO_V_SCALE),
    ),
)


# --- mlx-vlm ----------------------------------------------------------------------------------------------
def mlx_vlm_bidirectional(spec: DraftSpec) -> Causality | None:
    """mlx-vlm before 0.7: draft-block attention has no mask at all (every layer bidirectional); a DFlash2
    config with is_causal: true is refused (runs nothing)."""
    if spec.dialect != "nested" or (spec.version == "v2" and spec.causality.is_causal is True):
        return None
    return (False,) * spec.num_hidden_layers


def mlx_vlm_causality(spec: DraftSpec) -> Causality | None:
    """mlx-vlm 0.7: each layer is causal iff the config's is_causal, a field defaulting to false; the DFlash v1
    config sets it from dflash_config.causal, else the top-level is_causal; DFlash2 refuses is_causal: true."""
    if spec.dialect != "nested" or (spec.version == "v2" and spec.causality.is_causal is True):
        return None
    keys = spec.causality
    value = (
        keys.is_causal
        if spec.version == "v2"
        else (keys.dflash_causal if keys.dflash_causal is not None else keys.is_causal)
    )
    return (bool(value),) * spec.num_hidden_layers


def _v2_not_causal(d: Drafter) -> str | None:
    if d.version == "v2" and d.config.get("is_causal") is True:
        return "is_causal: true - 'DFlash2 causal draft blocks are not currently supported.'"
    return None


def _v2_window(d: Drafter) -> str | None:
    lt = d.config.get("layer_types")
    if (
        d.version == "v2"
        and isinstance(lt, list)
        and "sliding_attention" in lt
        and d.config.get("sliding_window") is None
    ):
        return "sliding_attention layers without sliding_window ('DFlash2 requires sliding_window ...')"
    return None


def _v2_taps(d: Drafter) -> str | None:
    dc: Any = d.config.get("dflash_config")
    taps = dc.get("target_layer_ids") if isinstance(dc, dict) else None
    if d.version != "v2" or taps is None:
        return None
    if (
        not isinstance(taps, list)
        or not taps
        or any(not isinstance(t, int) for t in taps)
        or any(b <= a for a, b in zip(taps, taps[1:]))
    ):
        return f"dflash_config.target_layer_ids = {taps!r} must be unique, increasing layer indices"
    return None


V1_DEFAULTS = (
    Default(
        "mask_token_id",
        248070,
        str(r.MLXVLM_MASK),
        only="v1",
        why="a wrong mask id drafts from the wrong embedding",
    ),
    Default(
        "target_layer_ids",
        (1, 8, 15, 22, 29),
        str(r.MLXVLM_TAPS),
        only="v1",
        why="fc is fed hidden states it was not trained on",
    ),
    Default(
        "block_size",
        16,
        f"{r.MLXVLM_BLOCK}; {r.MLXVLM_BLOCK_TOP_ONLY}",
        reads=("block_size",),
        only="v1",
        why="its DFlash v1 config reads the top-level block_size only",
    ),
    Default("rope_theta", 10_000_000.0, str(r.MLXVLM_ROPE), only="v1", why="the drafter's RoPE base"),
)
V1_FACTS = (
    _fact(
        "DFlash v1 config: block_size from the top level only (default 16); mask_token_id and target_layer_ids from "
        "dflash_config, else the top level, else 248070 and [1, 8, 15, 22, 29]",
        r.MLXVLM_V1,
        r.MLXVLM_BLOCK,
        r.MLXVLM_BLOCK_TOP_ONLY,
        r.MLXVLM_MASK,
        r.MLXVLM_TAPS,
        r.MLXVLM_ROPE,
    ),
)
V2_FACTS = (
    _fact(
        "DFlash2 config (model type dflash2): block_size and the conv / selector keys from dflash_config, else the "
        "top level; every conv / selector key must be a positive integer; causal blocks are refused; drafts "
        "runtime_block_size = min(5, block_size) tokens unless set",
        r.MLXVLM_DFLASH2,
        r.MLXVLM_V2_NESTED,
        r.MLXVLM_V2_REQUIRED,
        r.MLXVLM_V2_NOT_CAUSAL,
        r.MLXVLM_V2_RUNTIME,
    ),
)
V2_RULES = (
    Refusal("not causal", _v2_not_causal, str(r.MLXVLM_V2_NOT_CAUSAL)),
    Refusal("sliding window", _v2_window, str(r.MLXVLM_V2_REQUIRED)),
    Refusal("increasing taps", _v2_taps, str(r.MLXVLM_V2_REQUIRED)),
)


def _runtime_note(d: Drafter) -> str | None:
    return (
        "drafts min(5, block_size) tokens per step unless dflash_config.runtime_block_size is set"
        if d.version == "v2"
        else None
    )


_MLXVLM_LOAD = (r.MLXVLM_LOAD_MODEL, r.MLXVLM_LOAD_STRICT, r.MLX_STRICT_EXTRA)
MLXVLM_OLD_STRICT = _strict(
    Loader("mlx-vlm", strips_prefix=True, embeds_v1=False, biased=False), *_MLXVLM_LOAD, r.MLXVLM_NO_EMBED
)
MLXVLM_STRICT = _strict(
    Loader("mlx-vlm", strips_prefix=True, embeds_v1=True, biased=False, sinks=True),
    *_MLXVLM_LOAD,
    r.MLXVLM_V1_EMBED,
    r.MLXVLM_V2_NO_EMBED,
    r.MLXVLM_SINK_PARAM,
)
MLXVLM_WEIGHTS = _fact(
    "weights load strictly (load_drafter -> load_model -> load_weights(strict=True)): a stored "
    "name the drafter has no parameter for raises; sanitize strips one model. prefix (DFlash2 "
    "also renames the bare codebooks to .weight); the drafters own no embedding or head (the "
    "target's are bound at run time) and no attention bias",
    r.MLXVLM_LOAD_MODEL,
    r.MLXVLM_LOAD_STRICT,
    r.MLXVLM_LOAD_DEFAULT,
    r.MLX_STRICT_EXTRA,
    r.MLX_STRICT_DEFAULT,
    r.MLXVLM_V1_STRIP,
    r.MLXVLM_NO_EMBED,
    r.MLXVLM_NO_HEAD,
    r.MLXVLM_NO_BIAS,
)
MLXVLM_V2_WEIGHTS = _fact(
    "the DFlash2 sanitize strips one model. prefix and renames the codebooks, and builds no "
    "embedding: a shipped embed_tokens.weight raises",
    r.MLXVLM_V2_STRIP,
    r.MLXVLM_V2_NO_EMBED,
)
MLXVLM_OLD_EMBED = _fact(
    "the DFlash v1 sanitize builds no embedding before 0.7.0: a shipped embed_tokens.weight raises",
    r.MLXVLM_V1_NO_EMBED,
)
MLXVLM_SINK_TENSORS = _fact(
    "from 0.7.0 a layer holds an attention_sink_bias parameter when the config's "
    "attention_sink_bias is set (DFlash v1: dflash_config's, else the top level; DFlash2: "
    "the top level only); a stored sinks tensor, or any sink tensor before 0.7.0, raises",
    r.MLXVLM_SINK_PARAM,
    r.MLXVLM_SINKS,
    r.MLXVLM_V2_NO_SINK_KEY,
    r.MLXVLM_NO_SINKS,
)
MLXVLM_V1_EMBED = _fact(
    "from 0.7.0 the DFlash v1 sanitize builds an embedding for a shipped embed_tokens.weight, "
    "which then loads",
    r.MLXVLM_V1_EMBED,
)

RUNTIME = Refusal("runtime block", _runtime_note, str(r.MLXVLM_V2_RUNTIME), "DF810")
MLX_USE_SWA = ignores_use_swa(r.MLXVLM_NO_USE_SWA, r.MLXVLM_NO_USE_SWA_MODEL)
MLX_V_SCALE = ignores_v_scale(r.MLXVLM_NO_V_SCALE, r.MLXVLM_NO_V_SCALE_MODEL, r.MLXVLM_V2_NO_V_SCALE)
MLX_OLD_IGNORES = (MLX_USE_SWA, ignores_sinks(r.MLXVLM_NO_SINKS), MLX_V_SCALE)

# config keys the schema does not model that mlx-vlm reads (verify: DF121); its DFlash v1 config takes every
# top-level key that is one of its fields
_RUNTIME = (
    ("runtime_block_size", "the block it drafts at run time", r.MLXVLM_RUNTIME_BLOCK),
    ("draft_window_size", "a rotating draft KV cache of that many positions", r.MLXVLM_DRAFT_WINDOW),
)
KEYS = tuple(
    KeyRead(f"{where}{k}", effect, (cite, r.MLXVLM_CONFIG_FIELDS))
    for k, effect, cite in _RUNTIME
    for where in ("", "dflash_config.")
) + (
    KeyRead(
        "final_logit_softcapping",
        "caps the draft logits (the other engines read dflash_config.final_logit_softcapping)",
        (r.MLXVLM_TOP_SOFTCAP, r.MLXVLM_CONFIG_FIELDS),
        only="v1",
    ),
)
KEYS_CURRENT = KEYS + (
    KeyRead(
        "dflash_config.num_target_layers", NUM_TARGET_LAYERS, (r.MLXVLM_NUM_TARGET_LAYERS,), since="0.7.0"
    ),
    KeyRead(
        "attention_sink_bias",
        "builds attention sinks when dflash_config.attention_sink_bias is absent",
        (r.MLXVLM_TOP_SINKS, r.MLXVLM_CONFIG_FIELDS),
        since="0.7.0",
        only="v1",
    ),
    KeyRead(
        "dflash_query_causal",
        "the draft block's causality when dflash_config.causal is absent",
        (r.MLXVLM_QUERY_CAUSAL,),
        since="0.7.0",
    ),
)

MLX_VLM_V1_ONLY = Profile(
    engine="mlx-vlm",
    label="mlx-vlm",
    versions=between("0.6.0", "0.6.16", "release"),
    drafts=frozenset({"v1"}),
    reads=frozenset({"nested"}),
    version_by="no DFlash2",
    causality=mlx_vlm_bidirectional,
    read_keys=KEYS,
    causality_text="bidirectional: draft-block attention has no mask",
    taps="dflash_config.target_layer_ids, else top-level, else [1, 8, 15, 22, 29]",
    draft_tokens=None,
    sources=(
        _fact("no DFlash2 drafter", r.MLXVLM_NO_DFLASH2),
        _fact("draft-block self-attention is unmasked (bidirectional)", r.MLXVLM_V1_NONCAUSAL),
        MLXVLM_WEIGHTS,
        MLXVLM_OLD_EMBED,
    )
    + V1_FACTS,
    constraints=(MLXVLM_OLD_STRICT,),
    defaults=V1_DEFAULTS,
    ignores=MLX_OLD_IGNORES,
)

MLX_VLM_DFLASH2 = Profile(
    engine="mlx-vlm",
    label="mlx-vlm",
    versions=between("0.6.16", "0.7.0", "release"),
    drafts=frozenset({"v1", "v2"}),
    reads=frozenset({"nested"}),
    version_by="architecture / model type (a dflash2 config class)",
    causality=mlx_vlm_bidirectional,
    read_keys=KEYS,
    causality_text="bidirectional: draft-block attention has no mask (DFlash2 refuses is_causal: true)",
    taps="dflash_config.target_layer_ids, else top-level (v1: else [1, 8, 15, 22, 29])",
    draft_tokens=None,
    sources=V2_FACTS
    + V1_FACTS
    + (
        _fact(
            "the DFlash v1 config reads no causality key and draft-block "
            "self-attention is unmasked (bidirectional)",
            r.MLXVLM_NO_CAUSAL_KEY,
            r.MLXVLM_V1_NONCAUSAL,
        ),
        MLXVLM_WEIGHTS,
        MLXVLM_V2_WEIGHTS,
        MLXVLM_OLD_EMBED,
    ),
    constraints=V2_RULES + (MLXVLM_OLD_STRICT,),
    defaults=V1_DEFAULTS,
    advisories=(RUNTIME,),
    ignores=MLX_OLD_IGNORES,
)

MLX_VLM_CURRENT = Profile(
    engine="mlx-vlm",
    label="mlx-vlm",
    versions=at_least("0.7.0", "release"),
    drafts=frozenset({"v1", "v2"}),
    reads=frozenset({"nested"}),
    version_by="architecture / model type (a dflash2 config class)",
    causality=mlx_vlm_causality,
    read_keys=KEYS_CURRENT,
    causality_text="every layer causal iff is_causal (default false); DFlash v1: dflash_config.causal, else "
    "is_causal; DFlash2 refuses is_causal: true",
    taps="dflash_config.target_layer_ids, else top-level (v1: else [1, 8, 15, 22, 29])",
    draft_tokens=None,
    sources=V2_FACTS
    + V1_FACTS
    + (
        _fact(
            "a layer is causal iff the config's is_causal (default false); the DFlash v1 "
            "config maps dflash_config.causal to is_causal",
            r.MLXVLM_CAUSAL_KEY,
            r.MLXVLM_LAYER_CAUSAL,
            r.MLXVLM_IS_CAUSAL_FIELD,
        ),
        MLXVLM_WEIGHTS,
        MLXVLM_V2_WEIGHTS,
        MLXVLM_V1_EMBED,
        MLXVLM_SINK_TENSORS,
    ),
    constraints=V2_RULES + (MLXVLM_STRICT,),
    defaults=V1_DEFAULTS,
    advisories=(RUNTIME,),
    ignores=(MLX_USE_SWA, MLX_V_SCALE),
)

PROFILES = (DFLASH_MLX_PROFILE, MLX_VLM_V1_ONLY, MLX_VLM_DFLASH2, MLX_VLM_CURRENT)
