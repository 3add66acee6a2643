"""SGLang, by release range, as its released code reads (released.py cites each fact): DFlash v1 only
up to 0.5.18; DFlash2 from 0.5.19. Through 0.5.23 the causality, tap and block-size resolution and the
handling of quantized modules are the same in every release."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from ..formats.spec import DraftSpec
from . import causality, quant, serve
from . import released as r
from .attention_keys import ignores_sinks, ignores_use_swa, ignores_v_scale
from .profile import Causality, Default, Drafter, DraftTokens, Fact, KeyRead, Profile, Refusal, ReleaseScan
from .profile import fact as _fact
from .versions import VersionRange, at_least, below, between, exactly

RANK = 20  # engine display order (engines/registry.py)

# how `wheels check sglang==X` reads a release: the EntryClass statements of its DFlash / DSpark model files,
# and the config keys its DFlash files read (also through the _cfg_get helper). Reviewed: DSpark (a sibling
# family this toolkit does not validate) and MuseGlimmerAssistantModel (registered, but its DFlash loader does
# not load the assistant export's encoder.* names: formats/assistant.py)
SCAN = ReleaseScan(
    registry=(r"sglang/srt/models/(dflash|\w*dspark\w*)\.py",),
    names=r"\b(\w*(?:DFlash|DSpark|Draft|Assistant|XPress|Laguna|Beam)\w*)\b",
    within=r"(?ms)^EntryClass\s*=\s*(?:\[.*?\]|\w+)",
    dflash_files=r"sglang/srt/(models/dflash|speculative/dflash\w*)\.py$",
    key_patterns=(r"""_cfg_get\(\s*\w+\s*,\s*["'](\w+)["']""",),
    # text_config / get_text_config: where it looks the keys up; quantization_config / quant_algo: quantization
    # is judged from the tensor headers (checkpoint/quant.py); is_domino: derived from projector_type (KEYS)
    reviewed_keys=frozenset(
        {"text_config", "get_text_config", "quantization_config", "quant_algo", "is_domino"}
    ),
    reviewed_architectures=frozenset(
        {
            "MuseGlimmerAssistantModel",
            "Qwen3DSparkModel",
            "LingDSparkModel",
            "DSparkDraftModel",
            "DSparkMiniMaxDraftModel",
            "DeepseekV4ForCausalLMDSpark",
            "Lfm2DSparkDraftModel",
        }
    ),
)
# the effect of dflash_config.num_target_layers, read by SGLang and by mlx-vlm 0.7.0 and later
NUM_TARGET_LAYERS = (
    "the target depth, read before the top-level num_target_layers (SGLang spreads guessed taps over it)"
)

TOKENS = DraftTokens("--speculative-num-draft-tokens", lambda b: b, "block_size", str(r.SGLANG_TOKENS))


def guessed_taps(spec: DraftSpec) -> tuple[int, ...] | None:
    """The fallback when a config names no taps (sglang dflash_utils.build_target_layer_ids, also the z-lab
    reference's): evenly spaced from layer 1 to num_target_layers - 3 ([1, 16, 31, 46, 61] for 5 draft
    layers on a 64-layer target, where Qwen3.8 was trained on [5, 19, 33, 47, 61])."""
    n, k = spec.num_target_layers, spec.num_hidden_layers
    if n is None or n < 4 or k < 1:
        return None
    if k == 1:
        return (n // 2,)
    span = n - 4
    return tuple(int(round(1 + i * span / (k - 1))) for i in range(k))


TAPS = Default(
    "target_layer_ids",
    guessed_taps,
    f"{r.SGLANG_TAPS}; sgl-project/sglang#37475",
    why="a guessed tap set feeds fc hidden states it was not trained on",
)
BLOCK = Default(
    "block_size",
    16,
    str(r.SGLANG_BLOCK_DEFAULT),
    why="drafts a block of a length the drafter was not trained on",
)
NESTED_ONLY = _fact(
    "reads the nested dialect (dflash_config keys, else the same key at the top level); a flat "
    "config must be converted",
    r.SGLANG_BLOCK,
)
CAUSAL = _fact(
    "causality: is_causal, else sliding layers causal; with no layer_types every layer is bidirectional "
    "and is_causal is not consulted; dflash_config.causal is never read",
    r.SGLANG_CAUSAL,
    r.SGLANG_NO_LAYER_TYPES,
    r.SGLANG_NO_DFLASH_CAUSAL,
)
DEFAULTS = _fact(
    "block_size defaults to 16 and missing taps are guessed evenly", r.SGLANG_BLOCK_DEFAULT, r.SGLANG_TAPS
)
FC = _fact(
    "fc is a plain torch Linear for DFlash drafters (quant-aware only for Nemotron 3.5 drafts), and weights "
    "that match no parameter are skipped: a quantized fc's packed tensors are dropped, fc stays at random init "
    "(sgl-project/sglang#39087)",
    r.SGLANG_FC_PLAIN,
    r.SGLANG_IGNORE,
    r.SGLANG_FC_QUANTIZABLE,
)

UNKNOWN = _fact(
    "a stored tensor that matches no parameter (after the model. prefix and the encoder.* aliases) is "
    "skipped silently by load_weights: an unexpected tensor loads, with verify's DF202 warning; a "
    "model. prefix is stripped where the bare name is a parameter",
    r.SGLANG_IGNORE,
    r.SGLANG_PREFIX,
)
DOMINO = _fact(
    "0.5.20 and later raise on prefix_gru.* / embed_proj.* (Domino projector) weights unless "
    "dflash_config.projector_type is 'domino'; 0.5.19 skips them",
    r.SGLANG_DOMINO,
    r.SGLANG_NO_DOMINO,
)


def _domino_tensors(d: Drafter) -> str | None:
    dc = d.config.get("dflash_config")
    kind = (dc.get("projector_type") if isinstance(dc, dict) else None) or d.config.get("projector_type")
    names = sorted(
        n for n in d.unexpected if n.removeprefix("model.").startswith(("prefix_gru.", "embed_proj."))
    )
    if kind == "domino" or not names:
        return None
    return (
        f"{', '.join(names[:5])}: Domino projector weights without dflash_config.projector_type 'domino' raise "
        "ValueError in SGLang 0.5.20 and later (0.5.19 skips them); remove them or declare the projector"
    )


def _skipped_note(d: Drafter) -> str | None:
    names = sorted(d.unexpected)
    if not names:
        return None
    return (
        f"skips {', '.join(names[:5])}{' and more' if len(names) > 5 else ''} silently: no parameter takes "
        "the name (verify's DF202)"
    )


SKIPPED = Refusal("unexpected tensors", _skipped_note, str(r.SGLANG_IGNORE), "DF810")
DOMINO_TENSORS = Refusal("domino tensors", _domino_tensors, str(r.SGLANG_DOMINO), "DF805")

# config keys the schema does not model that SGLang reads (verify: DF121)
_DOMINO = "configures the Domino projector (prefix GRU, embedding projection)"
_MASK_TOKEN = "the mask token's text, looked up in the tokenizer when mask_token_id is absent"
KEYS = (
    KeyRead(
        "is_neox_style", "the RoPE layout of the drafter's q / k (false: interleaved pairs)", (r.SGLANG_NEOX,)
    ),
    KeyRead(
        "rope_is_neox_style",
        "the RoPE layout of the drafter's q / k, read before is_neox_style",
        (r.SGLANG_NEOX,),
    ),
    KeyRead("dflash_config.mask_token", _MASK_TOKEN, (r.SGLANG_MASK_TOKEN,)),
    KeyRead("mask_token", _MASK_TOKEN, (r.SGLANG_MASK_TOKEN,)),
    KeyRead("dflash_config.num_target_layers", NUM_TARGET_LAYERS, (r.SGLANG_NUM_TARGET_LAYERS,)),
)
_DOMINO_KEYS = ("projector_type", "emb_dim", "shift_label", "gru_hidden_dim", "pure_draft_prefix_len")
KEYS_CURRENT = (
    KEYS
    + tuple(
        KeyRead(f"{where}{k}", _DOMINO, (r.SGLANG_DOMINO_KEYS, r.SGLANG_DOMINO_GRU), since="0.5.20")
        for k in _DOMINO_KEYS
        for where in ("", "dflash_config.")
    )
    + (
        KeyRead(
            "use_gemma_norm",
            "builds Gemma-style RMSNorm (1 + weight) layers",
            (r.SGLANG_GEMMA_NORM, r.SGLANG_NO_GEMMA_NORM),
            since="0.5.23",
        ),
    )
)

USE_SWA = ignores_use_swa(r.SGLANG_NO_USE_SWA, r.SGLANG_NO_USE_SWA_MODEL)

OLD = Profile(
    engine="sglang",
    label="SGLang",
    versions=between("0.5.18", "0.5.19", "release"),
    architectures=("DFlashDraftModel",),
    drafts=frozenset({"v1"}),
    reads=frozenset({"nested"}),
    version_by="no DFlash2 (v1 only)",
    causality=causality.sglang,
    read_keys=KEYS,
    conversion_loader=True,
    taps="dflash_config.target_layer_ids (0-based); guessed when missing",
    draft_tokens=TOKENS,
    sources=(
        _fact("no DFlash2 (no conv / selector keys): DFlash v1 only", r.SGLANG_NO_DFLASH2),
        CAUSAL,
        DEFAULTS,
        _fact(
            "q/k/v are built as one QKVParallelLinear with the quant config (prefix 'qkv_proj' without the "
            "layer path)",
            r.SGLANG_QKV_QUANT,
            r.SGLANG_QKV_QUANT_018,
        ),
        FC,
        NESTED_ONLY,
        UNKNOWN,
    ),
    defaults=(TAPS, BLOCK),
    quant=quant.sglang,
    serve=serve.sglang,
    ignores=(
        USE_SWA,
        ignores_sinks(r.SGLANG_NO_SINKS),
        ignores_v_scale(r.SGLANG_NO_V_SCALE, r.SGLANG_NO_V_SCALE_MODEL),
    ),
    advisories=(SKIPPED,),
)

CURRENT = Profile(
    engine="sglang",
    label="SGLang",
    versions=at_least("0.5.19", "release"),
    architectures=("DFlashDraftModel", "DFlash2DraftModel"),
    drafts=frozenset({"v1", "v2"}),
    reads=frozenset({"nested"}),
    version_by="fields: the conv and selector switch on from the dflash_config keys, not the architecture",
    causality=causality.sglang,
    conversion_loader=True,
    taps="dflash_config.target_layer_ids (0-based); guessed when missing",
    draft_tokens=TOKENS,
    sources=(
        _fact(
            "DFlash2 from the dflash_config FIELDS (conv_kernel_size / conv_group_size, selector_rank / "
            "selector_top_k); speculative_num_draft_tokens = block_size",
            r.SGLANG_DFLASH2,
            r.SGLANG_TOKENS,
        ),
        CAUSAL,
        DEFAULTS,
        _fact(
            "q/k/v are built as one QKVParallelLinear that receives the quant config, so quantized q/k/v "
            "load",
            r.SGLANG_QKV_QUANT,
            r.SGLANG_QKV_QUANT_ARG,
        ),
        FC,
        NESTED_ONLY,
        UNKNOWN,
        DOMINO,
    ),
    # the range is judged as its strictest release: Domino weights raise from 0.5.20
    constraints=(DOMINO_TENSORS,),
    advisories=(SKIPPED,),
    read_keys=KEYS_CURRENT,
    defaults=(TAPS, BLOCK),
    quant=quant.sglang,
    serve=serve.sglang,
    # 0.5.19 builds sinks for Nemotron 3.5 drafts only; 0.5.20 and later read dflash_config.attention_sink_bias.
    # The range is judged as its oldest release, so a sink drafter is never said to load on 0.5.19; the same
    # for dflash_config.attention_value_scale, which 0.5.20 and later read and apply to V
    ignores=(
        USE_SWA,
        ignores_sinks(
            r.SGLANG_NEMOTRON_SINKS_ONLY, r.SGLANG_SINKS, extra=" (SGLang 0.5.19; 0.5.20 and later read it)"
        ),
        ignores_v_scale(
            r.SGLANG_NO_V_SCALE,
            r.SGLANG_NO_V_SCALE_MODEL,
            r.SGLANG_V_SCALE,
            r.SGLANG_V_SCALE_APPLIED,
            extra=" (SGLang 0.5.19; 0.5.20 and later read it)",
        ),
    ),
)


def _read_since_0511(f: Fact) -> bool:
    return all(c.versions[0] == "0.5.11" for c in f.cites)


def _before_018(
    versions: VersionRange, rule: Callable[[DraftSpec], Causality | None], text: str, fact: Fact
) -> Profile:
    """A release before 0.5.18: its causality, and only the facts of 0.5.18 read back to 0.5.11 (the q/k/v
    quantization and the mask-token lookup differ there and are not modelled)."""
    return dataclasses.replace(
        OLD,
        versions=versions,
        causality=rule,
        causality_text=text,
        quant=None,
        conversion_loader=False,
        meaning_check=False,
        sources=(fact,) + tuple(f for f in OLD.sources if f is not CAUSAL and _read_since_0511(f)),
        read_keys=tuple(k for k in KEYS if all(c.versions[0] == "0.5.11" for c in k.cites)),
    )


NONE = dataclasses.replace(
    OLD,
    versions=below("0.5.11", "release"),
    drafts=frozenset(),
    causality=None,
    causality_text="no DFlash",
    sources=(_fact("no DFlash: sglang/srt/models/dflash.py has no DFlashDraftModel", r.SGLANG_NO_DFLASH),),
    defaults=(),
    quant=None,
    serve=None,
    ignores=(),
    advisories=(),
    read_keys=(),
    conversion_loader=False,
    meaning_check=False,
    version_by="no DFlash",
)
NONCAUSAL = _before_018(
    between("0.5.11", "0.5.14", "release"),
    causality.sglang_noncausal,
    "",
    _fact(
        "causality: every draft layer runs non-causal (ENCODER_ONLY); layer_types and is_causal are not read",
        r.SGLANG_ALL_NONCAUSAL,
        r.SGLANG_NO_IS_CAUSAL,
    ),
)
SLIDING = _before_018(
    between("0.5.14", "0.5.17", "release"),
    causality.sglang_sliding,
    "",
    _fact(
        "causality: sliding layers causal, full layers and a config without layer_types "
        "non-causal; is_causal is not read",
        r.SGLANG_SLIDING_DECODER,
        r.SGLANG_NO_IS_CAUSAL,
    ),
)
FULL_IS_CAUSAL = _before_018(
    exactly("0.5.17", "release"),
    causality.sglang_0517,
    "full layers causal iff is_causal (default false); sliding layers always causal; "
    "no layer_types => bidirectional",
    _fact(
        "causality: a full layer is causal iff is_causal, a sliding layer always is",
        r.SGLANG_FULL_IS_CAUSAL,
        r.SGLANG_SLIDING_DECODER,
    ),
)

PROFILES = (NONE, NONCAUSAL, SLIDING, FULL_IS_CAUSAL, OLD, CURRENT)
