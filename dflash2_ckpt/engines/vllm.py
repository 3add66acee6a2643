"""vLLM, by release range, as its released code reads (released.py cites each fact):

<0.20: no DFlash; 0.20-0.22: DFlash v1, every layer non-causal whatever the config says; 0.23-0.25:
dflash_config.causal for every layer (absent: non-causal), flat configs bidirectional; 0.26-0.27: DFlash v1 only,
dflash_config.causal, else sliding => causal, top-level is_causal ignored; ==0.28.0: DFlash2 registered but every DFlash2
checkpoint fails to load; 0.29-0.30: DFlash2 loads, the conv kernel_projection is built unquantized;
>=0.31: the conv kernel_projection takes the draft quant config (the selector stays dense), and weight-quantized
projections load (vLLM 0.32.0's own loader, tests/vllm_engine: fixtures/vllm/golden.json); 0.33.0 reads the
Muse-Glimmer assistant export non-causal; >=0.34: Model Runner V1 removed (no runner notes), the method comes
from the draft class's declared speculator, and the DFlash families of engines/vllm_families.py.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ..quant.storage import is_side_tensor
from . import causality, quant, serve, vllm_families
from . import released as r
from .attention_keys import ignores_v_scale
from .profile import (
    Breakage,
    Default,
    Drafter,
    DraftTokens,
    Fact,
    KeyRead,
    Profile,
    QuantOutcome,
    Refusal,
    ReleaseScan,
    listed,
)
from .profile import fact as _fact
from .versions import VersionRange, at_least, below, between, exactly

RANK = 10  # engine display order (engines/registry.py)

# how `python -m dflash2_ckpt.engines.wheels check vllm==X` reads a release: the registry's draft architectures
# and the config keys the DFlash files read; the reviewed names are targets, other draft methods and DSpark
# (a sibling family this toolkit does not validate)
SCAN = ReleaseScan(
    registry=("vllm/model_executor/models/registry.py",),
    names=r'"(\w*(?:DFlash|Draft|XPress|Beam|Laguna|DSpark)\w*)"\s*:',
    dflash_files=r"(dflash|speculators/algos)[\w/]*\.py$",
    # EAGLE-3 keys the same speculators mapping reads for another method; eagle_config: vllm._uses_aux;
    # compilation / attention_config: the engine's own run-time config, not the checkpoint's
    reviewed_keys=frozenset(
        {
            "eagle_config",
            "eagle_aux_hidden_state_layer_ids",
            "fc_norm",
            "norm_before_fc",
            "norm_before_residual",
            "norm_output",
            "compilation",
            "attention_config",
            # Laguna: set by DFlashLagunaForCausalLM from the target's layer count, not read
            "target_layer_count",
        }
    ),
    reviewed_architectures=frozenset(
        {
            "LagunaForCausalLM",
            "BeamForCausalLM",
            "PEagleDraftModel",
            "LiLiCorrDraftModel",
            "DSparkDraftModel",
            "DSparkV41DraftModel",
            "DSparkMiniMaxDraftModel",
            "Qwen3DSparkModel",
            "Qwen3OmniDSparkModel",
            "K3DSparkModel",
            "Gemma4DSparkModel",
            "MuseSparkDSparkModel",
            "MistralLarge4DSparkModel",
        }
    ),
)
V1_ARCHS = ("DFlashDraftModel",)
V2_ARCHS = V1_ARCHS + ("DFlash2DraftModel", "DFlashMuseGlimmerAssistantModel")

TOKENS = DraftTokens("num_speculative_tokens", lambda b: b - 1, "block_size - 1", str(r.VLLM_FLAT_SAMPLE))
ROPE = Default(
    "rope_theta",
    1_000_000.0,
    str(r.VLLM_ROPE) + "; lucebox#447",
    why="the drafter's RoPE base; the transformers Qwen3 default is 10000",
)
SAMPLE = Default(
    "sample_from_anchor", False, str(r.VLLM_FLAT_SAMPLE), why="DFlash drafts from the mask slots only"
)


FLAT_READS = _fact(
    "reads the nested dialect and the speculators flat dialect (update_dflash maps "
    "aux_hidden_state_layer_ids - 1 to dflash_config.target_layer_ids and sets dflash_config.causal = "
    "not sliding_window_non_causal, absent = bidirectional)",
    r.VLLM_FLAT_TAPS,
    r.VLLM_FLAT_CAUSAL,
)
SINKS = _fact(
    "MiMo-style keys are read: dflash_config.use_swa slides every layer of an all-full layer_types and "
    "dflash_config.attention_sink_bias builds one learned sink logit per head",
    r.VLLM_USE_SWA_LEGACY,
    r.VLLM_USE_SWA,
    r.VLLM_SINKS,
)
EMBED = _fact(
    "a shipped embed_tokens copy is loaded into the drafter's own embedding and used for drafting; "
    "without one the drafter shares the target's",
    r.VLLM_EMBED,
)
ASSISTANT_READS = _fact(
    "reads the Muse-Glimmer assistant export as it is: MuseGlimmerAssistantModel routes to "
    "qwen3_dflash, whose weight mapper maps encoder.fc / encoder.output_norm_enc to fc / hidden_norm",
    r.VLLM_ASSISTANT,
)
PREFIX = _fact(
    "load_weights prepends model. to every stored name but lm_head / d2t / t2d, so a name stored with a "
    "model. prefix reaches the DFlash module as model.model.* and AutoWeightsLoader raises",
    r.VLLM_PREFIXES,
    r.VLLM_AUTOLOADER,
    r.VLLM_UNKNOWN_RAISES,
)
UNKNOWN = _fact(
    "a stored tensor the DFlash module has no parameter for (after load_weights' own renames and "
    "WeightsMapper) fails the load: AutoWeightsLoader raises 'There is no module or parameter named ...' "
    "unless it is the .bias of a module it has, which it ignores; a mask_hidden weight fails an assert. "
    "DFlash2 inherits the DFlash v1 loader",
    r.VLLM_AUTOLOADER,
    r.VLLM_UNKNOWN_RAISES,
    r.VLLM_BIAS_IGNORED,
    r.VLLM_MASK_HIDDEN,
    r.VLLM_DFLASH2_INHERITS,
)
DRAFT_QUANT = _fact(
    "drafter linears are built with the draft's own quant config, a fresh copy that is never given "
    "packed_modules_mapping: weight-quantized projections fail to load (vllm-project/vllm#51581 "
    "still reproduces from this code path)",
    r.VLLM_DRAFT_QUANT,
    r.VLLM_DRAFT_QUANT_FRESH,
    r.VLLM_DRAFT_QUANT_NO_PACKED,
    r.VLLM_QUANT_KV_ABSENT,
)
DRAFT_QUANT_LOADS = _fact(
    "drafter linears are built with the draft's own quant config, and weight-quantized "
    "projections load: the context-KV precompute runs a quantized qkv_proj through its quant "
    "method (vLLM 0.32.0's loader takes the FP8 and W4A16 fixtures: fixtures/vllm/golden.json)",
    r.VLLM_DRAFT_QUANT,
    r.VLLM_QUANT_KV,
)


# config keys the schema does not model that vLLM reads (verify: DF121); flat: transformer_layer_config is the
# base of the config vLLM builds (speculators/base.py), so only keys there are read
_AUX = "false feeds the drafter no target hidden states"
_NEOX = "the RoPE layout of the drafter's q / k (false: interleaved pairs)"
_SINKS = "builds attention sinks when dflash_config.attention_sink_bias is absent"
KEYS: tuple[KeyRead, ...] = (
    KeyRead("dflash_config.use_aux_hidden_state", _AUX, (r.VLLM_DRAFTER_CONFIG, r.VLLM_AUX_HIDDEN)),
    KeyRead("use_aux_hidden_state", _AUX, (r.VLLM_DRAFTER_CONFIG, r.VLLM_AUX_HIDDEN)),
    KeyRead("add_swa_attention_sink_bias", _SINKS, (r.VLLM_SINK_FALLBACK,)),
    KeyRead(
        "transformer_layer_config.add_swa_attention_sink_bias",
        _SINKS,
        (r.VLLM_SINK_FALLBACK, r.VLLM_FLAT_BASE),
    ),
    KeyRead("transformer_layer_config.use_aux_hidden_state", _AUX, (r.VLLM_AUX_HIDDEN, r.VLLM_FLAT_BASE)),
)
LOGIT_SCALE = KeyRead(
    "logit_scale",
    "multiplies the draft logits (LogitsProcessor scale, default 1.0)",
    (r.VLLM_LOGIT_SCALE,),
    since="0.20.0",
)
KEYS = KEYS + (LOGIT_SCALE,)
KEYS_031 = (
    KeyRead(
        "has_own_lm_head",
        "true builds the draft lm_head with the draft quant config",
        (r.VLLM_OWN_LM_HEAD,),
        since="0.31.0",
    ),
)
KEYS_028 = KEYS + (
    KeyRead("is_neox_style", _NEOX, (r.VLLM_NEOX,), since="0.28.0"),
    KeyRead("transformer_layer_config.is_neox_style", _NEOX, (r.VLLM_NEOX, r.VLLM_FLAT_BASE), since="0.28.0"),
)


def _dflash_config(d: Drafter) -> dict[str, Any]:
    dc = d.config.get("dflash_config")
    return dc if isinstance(dc, dict) else {}


def _layer_types(d: Drafter) -> list[Any] | None:
    lt = d.config.get("layer_types")
    return lt if isinstance(lt, list) else None


def _mixed(d: Drafter) -> bool:
    lt = _layer_types(d)
    return lt is not None and 0 < sum(t == "sliding_attention" for t in lt) < len(lt)


def _swa_everywhere(d: Drafter) -> bool:
    """dflash_config.use_swa turns every layer sliding when layer_types has no sliding layer (or is absent)."""
    lt = _layer_types(d)
    return bool(_dflash_config(d).get("use_swa")) and (lt is None or "sliding_attention" not in lt)


def _window_missing(d: Drafter) -> str | None:
    if d.dialect != "nested":
        return None
    lt = _layer_types(d) or []
    sliding = _swa_everywhere(d) or "sliding_attention" in lt
    if (
        sliding
        and _dflash_config(d).get("swa_window_size") is None
        and d.config.get("sliding_window") is None
    ):
        return (
            "sliding attention needs a window: neither dflash_config.swa_window_size nor sliding_window is set "
            "(ValueError 'DFlash sliding attention requires a window size')"
        )
    return None


# names load_weights itself routes, renames or maps away, or that depend on the config (sinks, the head,
# a shipped embedding), and quantization side tensors the quant config's own mappers and suffixes handle:
# left out, so a refusal is only claimed where the loader surely has no parameter for the name
_ROUTED = (
    "t2d",
    "d2t",
    "draft_id_to_target_id",
    "embed_tokens",
    "fc.",
    "mask_embedding",
    "lm_head",
    "rotary_emb.",
    "rotary_pos_emb.",
    "attention_sink_bias",
    "sinks",
    "midlayer",
    "encoder.",
)


def _ignored_bias(d: Drafter, name: str) -> bool:
    """AutoWeightsLoader ignores a `.bias` only where the module exists and lacks the parameter (it matches
    the suffix on the missing name, so the bias of a module that is not there raises at that module): the
    module exists when another of its tensors is stored and is part of the drafter."""
    if not name.endswith(".bias"):
        return False
    module = name[: -len("bias")]
    return any(t.startswith(module) and t != name and t not in d.unexpected for t in d.tensors)


def refused_tensors(d: Drafter) -> list[str]:
    """The unexpected tensors (verify's DF202) vLLM's AutoWeightsLoader raises on: no parameter of the DFlash
    module takes the name after its mappers, and it is not the `.bias` of a module it has (those it ignores)."""
    return sorted(
        n
        for n in d.unexpected
        if not _ignored_bias(d, n) and not any(k in n for k in _ROUTED) and not is_side_tensor(n)
    )


def _unknown_tensors(d: Drafter) -> str | None:
    hidden = sorted(n for n in d.tensors if "mask_hidden" in n)
    if hidden:
        return (
            f"{', '.join(hidden)}: load_weights asserts no weight is named mask_hidden (AssertionError); "
            "remove the tensor, DFlash embeds the mask slots through mask_token_id"
        )
    names = refused_tensors(d)
    if not names:
        return None
    shown = listed(names, 5)
    return (
        f"{shown} {'matches' if len(names) == 1 else 'match'} no parameter of its DFlash module, and its "
        f"AutoWeightsLoader raises ValueError 'There is no module or parameter named ...'; remove "
        f"{'it' if len(names) == 1 else 'them'} from the safetensors files"
    )


# substrings load_weights' own WeightsMapper or AutoWeightsLoader drop by name before routing (the rotary
# caches always, a mask embedding unless mask_embedding.pt ships one, fc when the drafter takes no aux states)
_DROPPED = (
    "rotary_pos_emb.inv_freq",
    "rotary_emb.inv_freq",
    "rotary_emb.cos_cached",
    "rotary_emb.sin_cached",
    "mask_embedding",
)


def _uses_aux(d: Drafter) -> bool:
    eagle = d.config.get("eagle_config")
    dc = {**(eagle if isinstance(eagle, dict) else {}), **_dflash_config(d)}
    return dc.get("use_aux_hidden_state", d.config.get("use_aux_hidden_state", True)) is not False


def prefixed_tensors(d: Drafter) -> list[str]:
    """The stored names load_weights turns into model.model.*: every name but lm_head / d2t / t2d gets `model.`
    prepended, so a stored `model.` prefix doubles and the DFlash module has no child `model` to route it to.
    Quantization side tensors are left out (the quant config's mappers may rename them first)."""
    dropped = _DROPPED + (() if _uses_aux(d) else ("fc.",))
    unknown = set(refused_tensors(d))  # said once, by the unknown-tensor rule
    return sorted(
        n
        for n in d.tensors
        if n.startswith("model.")
        and n not in unknown
        and not any(k in n for k in ("lm_head", "t2d", "d2t") + dropped)
        and not is_side_tensor(n)
    )


def _prefixed(d: Drafter) -> str | None:
    names = prefixed_tensors(d)
    if not names:
        return None
    shown = listed(names, 3)
    return (
        f"{shown} {'is' if len(names) == 1 else 'are'} stored with a model. prefix, and load_weights prepends "
        f"another to every name but lm_head / d2t: {names[0]} reaches its DFlash module as model.{names[0]}, "
        "which has no child named model, and its AutoWeightsLoader raises ValueError 'There is no module or "
        f"parameter named 'model' ...'; store {'it' if len(names) == 1 else 'them'} without the model. prefix"
    )


# the dialect `convert --to` writes from each source dialect; its tensor plan drops the model. prefix
_OTHER = {"nested": "flat", "flat": "nested", "assistant": "nested"}


def _renaming_dialect(d: Drafter) -> str | None:
    return _OTHER.get(d.dialect or "")


def _use_swa_note(d: Drafter) -> str | None:
    if d.dialect == "nested" and _swa_everywhere(d):
        return (
            "dflash_config.use_swa makes vLLM run every layer with a sliding window although layer_types names "
            "none; causality still follows layer_types / is_causal"
        )
    return None


def _mixed_note(d: Drafter) -> str | None:
    if d.dialect == "nested" and _mixed(d):
        return (
            "mixed sliding / full layers need the V2 model runner (the default while VLLM_USE_V2_MODEL_RUNNER "
            "is unset); on the V1 runner loading raises NotImplementedError"
        )
    return None


def _v2_runner_note(d: Drafter) -> str | None:
    if d.version == "v2":
        return (
            "a DFlash2 drafter needs the V2 model runner, the default while VLLM_USE_V2_MODEL_RUNNER is unset; "
            "VLLM_USE_V2_MODEL_RUNNER=0 is refused ('Model Runner V1 does not support: ...')"
        )
    return None


WINDOW = Refusal("sliding window size", _window_missing, str(r.VLLM_WINDOW))
UNKNOWN_TENSORS = Refusal(
    "unknown tensors", _unknown_tensors, f"{r.VLLM_AUTOLOADER}; {r.VLLM_UNKNOWN_RAISES}", "DF805"
)
PREFIXED = Refusal(
    "model. prefix",
    _prefixed,
    f"{r.VLLM_PREFIXES}; {r.VLLM_UNKNOWN_RAISES}",
    "DF805",
    convert_to=_renaming_dialect,
)
USE_SWA = Refusal("use_swa", _use_swa_note, str(r.VLLM_USE_SWA), "DF810")
MIXED = Refusal("mixed sliding / full", _mixed_note, str(r.VLLM_MIXED), "DF810")
V2_RUNNER = Refusal("V2 model runner", _v2_runner_note, f"{r.VLLM_V1_RUNNER}; {r.VLLM_V2_DEFAULT}", "DF810")


# before 0.31 attention_value_scale is not read at all; the flat dialect never carries it
OLD_V_SCALE = ignores_v_scale(
    r.VLLM_NO_V_SCALE, r.VLLM_FLAT_NO_V_SCALE, extra=" (vLLM 0.31 and later read it)"
)


def _consumes_projections(
    rule: Callable[[Mapping[str, str]], list[QuantOutcome]],
) -> Callable[[Mapping[str, str]], list[QuantOutcome]]:
    """From 0.31 weight-quantized projections load (DRAFT_QUANT_LOADS); what vLLM builds dense still must be."""
    return lambda modules: [o for o in rule(modules) if o.effect != "fails"]


def _profile(versions: VersionRange, drafts: frozenset[Any], sources: tuple[Fact, ...], **kw: Any) -> Profile:
    base: dict[str, Any] = dict(
        engine="vllm",
        label="vLLM",
        versions=versions,
        drafts=drafts,
        reads=frozenset({"nested", "flat"}),
        version_by="architecture (DFlash2DraftModel; speculators_model_type 'dflash2' for flat)",
        causality=causality.zlab,
        read_keys=KEYS_028,
        conversion_loader=True,
        taps="dflash_config.target_layer_ids (0-based, output of that layer); flat: aux ids - 1",
        draft_tokens=TOKENS,
        sources=sources,
        defaults=(ROPE, SAMPLE),
        serve=serve.vllm,
        constraints=(WINDOW, UNKNOWN_TENSORS, PREFIXED),
        advisories=(USE_SWA, MIXED),
        architectures=V2_ARCHS if "v2" in drafts else V1_ARCHS if drafts else (),
    )
    base.update(kw)
    # the DFlash families this range registers, their invariants and the keys it ignores (vllm_families.py)
    fam = vllm_families.for_range(versions)
    for slot in (
        "requires",
        "constraints",
        "ignores",
        "advisories",
        "sources",
        "families",
        "architectures",
        "read_keys",
    ):
        base[slot] = tuple(dict.fromkeys(tuple(base.get(slot, ())) + getattr(fam, slot)))
    return Profile(**base)


def _sliding_ignored(d: Drafter) -> str | None:
    lt = _layer_types(d) or []
    if d.dialect != "nested" or not ("sliding_attention" in lt or _dflash_config(d).get("use_swa")):
        return None
    return (
        "runs its sliding layers with full attention: this release reads no layer_types, sliding_window or "
        "dflash_config.use_swa (vLLM 0.25 and later window them)"
    )


NO_SLIDING = Refusal("sliding window", _sliding_ignored, str(r.VLLM_NO_SLIDING), "DF815")
# the weight loader before 0.26 is not modelled (no AutoWeightsLoader in qwen3_dflash.py): no tensor refusals;
# the meaning check (conversion_loader) covers vLLM from 0.26
_BEFORE_026 = (
    _fact(
        "no DFlash2: DFlash2DraftModel is not registered (DFlash v1 only)", r.VLLM_NO_DFLASH2, r.VLLM_DFLASH1
    ),
    EMBED,
)

NONE = _profile(
    below("0.20", "release"),
    frozenset(),
    (_fact("no DFlash at all: DFlashDraftModel is not registered", r.VLLM_NO_DFLASH),),
    version_by="no DFlash",
    causality=None,
    causality_text="no DFlash",
    defaults=(),
    serve=None,
    read_keys=(),
    constraints=(),
    advisories=(),
    conversion_loader=False,
    meaning_check=False,
)

NONCAUSAL = _profile(
    between("0.20", "0.23", "release"),
    frozenset({"v1"}),
    (
        _fact(
            "causality: every draft layer runs non-causal whatever the config says (the proposer builds its "
            "attention metadata with causal=False); dflash_config.causal and is_causal are not read",
            r.VLLM_ALWAYS_NONCAUSAL,
            r.VLLM_CAUSAL_LEGACY_NO_IS_CAUSAL,
        ),
        _fact(
            "no sliding window: layer_types, sliding_window and dflash_config.use_swa are not read",
            r.VLLM_NO_SLIDING,
        ),
        _fact("the speculators flat dialect is mapped without a causal key", r.VLLM_FLAT_NO_CAUSAL),
    )
    + _BEFORE_026,
    version_by="architecture (DFlash2DraftModel is not registered)",
    causality=causality.vllm_noncausal,
    read_keys=(LOGIT_SCALE,),
    constraints=(),
    advisories=(),
    ignores=(NO_SLIDING, OLD_V_SCALE),
    conversion_loader=False,
    meaning_check=False,
)

DFLASH_CAUSAL = _profile(
    between("0.23", "0.26", "release"),
    frozenset({"v1"}),
    (
        _fact(
            "causality: dflash_config.causal for every layer, absent = non-causal, so a sliding layer is not causal "
            "by default; the top-level is_causal is not read (vllm-project/vllm#43445 and #47453 came later)",
            r.VLLM_PROPOSER_CAUSAL,
            r.VLLM_RUNNER2_CAUSAL,
            r.VLLM_CAUSAL_LEGACY_NO_IS_CAUSAL,
        ),
        _fact(
            "0.25 windows sliding layers but still runs them with dflash_config.causal (its per-layer causal is "
            "unused); 0.23-0.24 read no sliding window",
            r.VLLM_LAYER_CAUSAL_UNUSED,
            r.VLLM_NO_SLIDING,
        ),
        _fact(
            "the speculators flat dialect is mapped without a causal key: sliding_window_non_causal is not read "
            "and every flat drafter runs bidirectional",
            r.VLLM_FLAT_NO_CAUSAL,
        ),
    )
    + _BEFORE_026,
    version_by="architecture (DFlash2DraftModel is not registered)",
    causality=causality.vllm_dflash_causal,
    read_keys=(LOGIT_SCALE,),
    # the range is judged as its oldest release (0.23), which reads no sliding window
    constraints=(),
    advisories=(),
    ignores=(NO_SLIDING, OLD_V_SCALE),
    conversion_loader=False,
    meaning_check=False,
)

LEGACY = _profile(
    between("0.26", "0.28", "release"),
    frozenset({"v1"}),
    (
        _fact(
            "no DFlash2: DFlash2DraftModel is not registered (DFlash v1 only)",
            r.VLLM_NO_DFLASH2,
            r.VLLM_DFLASH1,
        ),
        _fact(
            "causality: dflash_config.causal overrides every layer, else sliding layers causal; the top-level "
            "is_causal is not read",
            r.VLLM_CAUSAL_LEGACY,
            r.VLLM_CAUSAL_LEGACY_NO_IS_CAUSAL,
        ),
        EMBED,
        SINKS,
        FLAT_READS,
        UNKNOWN,
        PREFIX,
    ),
    version_by="architecture (DFlash2DraftModel is not registered)",
    causality=causality.vllm_legacy,
    read_keys=KEYS,
    quant=quant.vllm_rule(False, str(r.VLLM_SELECTOR_DENSE)),
    constraints=(UNKNOWN_TENSORS, PREFIXED),
    advisories=(),
    ignores=(OLD_V_SCALE,),
)

BROKEN = _profile(
    exactly("0.28.0", "release"),
    frozenset({"v1", "v2"}),
    (
        _fact(
            "registers DFlash2DraftModel, but every DFlash2 checkpoint fails to load (vllm-project/vllm#53428, "
            "#53612; its loader skips names by substring, replaced in 0.29.0 by a WeightsMapper)",
            r.VLLM_DFLASH2,
            r.VLLM_LOADER_028,
        ),
        _fact("no speculators 'dflash2' flat config yet", r.VLLM_FLAT_NO_DFLASH2),
        _fact("causality: is_causal, else dflash_config.causal, else sliding layers causal", r.VLLM_CAUSAL),
        EMBED,
        FLAT_READS,
        UNKNOWN,
        PREFIX,
    ),
    breakages=(
        Breakage(
            frozenset({"v2"}),
            "There is no module or parameter named 'layers.0.attention_conv'",
            f"vllm-project/vllm#53428, #53612; {r.VLLM_LOADER_028}",
        ),
    ),
    quant=quant.vllm_rule(False, str(r.VLLM_CONV_DENSE)),
    ignores=(OLD_V_SCALE,),
)

READS_ASSISTANT = frozenset({"nested", "flat", "assistant"})

_LOADS = (
    _fact(
        "DFlash2 loads: DFlash2DraftModel registered, speculators 'dflash2' flat configs mapped; method "
        "'dflash', num_speculative_tokens = block_size - 1",
        r.VLLM_DFLASH2,
        r.VLLM_FLAT_DFLASH2,
        r.VLLM_LOADER_029,
    ),
    _fact(
        "causality: is_causal, else dflash_config.causal, else sliding layers causal",
        r.VLLM_CAUSAL,
        r.VLLM_CAUSAL_FN,
    ),
    _fact(
        "dflash_config.use_swa forces a sliding window on every layer of an all-full layer_types; a sliding "
        "layer is windowed by dflash_config.swa_window_size, else sliding_window, and raises without either",
        r.VLLM_USE_SWA,
        r.VLLM_SWA_WINDOW,
        r.VLLM_WINDOW,
    ),
    _fact("mixed sliding / full layers raise on the V1 model runner", r.VLLM_MIXED, r.VLLM_V1_RUNNER_MIXED),
    _fact(
        "the V1 runner refuses DFlash2 drafters; the V2 runner is the default while VLLM_USE_V2_MODEL_RUNNER "
        "is unset",
        r.VLLM_V1_RUNNER,
        r.VLLM_V1_REFUSES,
        r.VLLM_V2_DEFAULT,
    ),
    EMBED,
    SINKS,
    FLAT_READS,
    UNKNOWN,
    PREFIX,
)

DENSE_CONV = _profile(
    between("0.29", "0.31", "release"),
    frozenset({"v1", "v2"}),
    _LOADS
    + (
        DRAFT_QUANT,
        _fact(
            "the conv kernel_projection, the selector hidden_projection and the codebooks are built "
            "unquantized",
            r.VLLM_CONV_DENSE,
            r.VLLM_SELECTOR_DENSE,
            r.VLLM_CODEBOOKS,
        ),
    ),
    quant=quant.vllm_rule(False, f"{r.VLLM_CONV_DENSE}; {r.VLLM_SELECTOR_DENSE}"),
    advisories=(USE_SWA, MIXED, V2_RUNNER),
    reads=READS_ASSISTANT,
    ignores=(OLD_V_SCALE,),
)

_QUANT_031 = (
    DRAFT_QUANT_LOADS,
    _fact(
        "the conv kernel_projection takes the draft quant config; the selector hidden_projection and "
        "the codebooks stay unquantized",
        r.VLLM_CONV_QUANT,
        r.VLLM_SELECTOR_DENSE,
        r.VLLM_CODEBOOKS,
    ),
    _fact(
        "draft quant exclusions are re-addressed to the runtime layer numbers (0.31-0.32 for "
        "exclude_modules lists, 0.33 through map_draft_quant_config for ModelOpt)",
        r.VLLM_EXCLUDE_ALIASES,
        r.VLLM_MODELOPT_MAP,
        r.VLLM_MODELOPT_MAP_ABSENT,
    ),
    _fact(
        "dflash_config.attention_value_scale multiplies V in every draft attention (nested dialect; the "
        "flat dialect's mapping drops the key)",
        r.VLLM_V_SCALE,
        r.VLLM_FLAT_NO_V_SCALE,
    ),
)

ASSISTANT_CAUSAL = _fact(
    "the Muse-Glimmer assistant export (model_type muse_glimmer_assistant) is read with the z-lab "
    "rule: without is_causal its sliding layers run causal (no model-type default yet)",
    r.VLLM_ASSISTANT_CAUSAL_ABSENT,
    r.VLLM_CAUSAL,
)
ASSISTANT_NONCAUSAL = _fact(
    "the Muse-Glimmer assistant export (model_type muse_glimmer_assistant) gets "
    "dflash_config.causal = false unless it sets one: every layer bidirectional unless a "
    "top-level is_causal says otherwise",
    r.VLLM_ASSISTANT_NONCAUSAL,
    r.VLLM_ASSISTANT_NONCAUSAL_DEFAULT,
    r.VLLM_CAUSAL,
)
FLAT_V_SCALE = ignores_v_scale(r.VLLM_FLAT_NO_V_SCALE, dialects=("flat",))

CURRENT_032 = _profile(
    between("0.31", "0.33", "release"),
    frozenset({"v1", "v2"}),
    _LOADS + _QUANT_031 + (ASSISTANT_CAUSAL,),
    quant=_consumes_projections(quant.vllm_rule(True, str(r.VLLM_SELECTOR_DENSE))),
    advisories=(USE_SWA, MIXED, V2_RUNNER),
    reads=READS_ASSISTANT,
    ignores=(FLAT_V_SCALE,),
    read_keys=KEYS_028 + KEYS_031,
)

METHOD_BY_NAME = _fact(
    "without a method, 'dflash' is inferred only from a draft path that names dflash or the "
    "MuseGlimmerAssistantModel architecture; the serve command names the method",
    r.VLLM_METHOD_BY_NAME,
)
CURRENT_033 = _profile(
    between("0.33", "0.34", "release"),
    frozenset({"v1", "v2"}),
    _LOADS + _QUANT_031 + (ASSISTANT_NONCAUSAL, METHOD_BY_NAME),
    quant=_consumes_projections(quant.vllm_rule(True, str(r.VLLM_SELECTOR_DENSE))),
    advisories=(USE_SWA, MIXED, V2_RUNNER),
    reads=READS_ASSISTANT,
    ignores=(FLAT_V_SCALE,),
    causality=causality.vllm_assistant_noncausal,
    read_keys=KEYS_028 + KEYS_031,
)

# 0.34.0: Model Runner V1 is gone, so its refusals and the runner notes (DF810) go with it
_LOADS_034 = tuple(f for f in _LOADS if r.VLLM_V1_RUNNER not in f.cites and r.VLLM_MIXED not in f.cites) + (
    _fact(
        "Model Runner V1 is removed: any VLLM_USE_V2_MODEL_RUNNER other than 1 raises, and mixed sliding / full "
        "layers and DFlash2 drafters need no runner switch",
        r.VLLM_V1_REMOVED,
        r.VLLM_V1_RUNNER_GONE,
        r.VLLM_MIXED_GONE,
    ),
    _fact(
        "the speculative method comes from the speculator the draft's model class declares (every DFlash family "
        "declares base method 'dflash'); a configured method that differs raises",
        r.VLLM_METHOD_DECLARED,
        r.VLLM_METHOD_CHECKED,
        r.VLLM_DFLASH_DECLARES,
        r.VLLM_DFLASH_BASE_METHOD,
        r.VLLM_METHOD_BY_NAME_GONE,
    ),
)
_QUANT_034 = (
    _fact(
        "drafter linears are built with the draft's own quant config, and weight-quantized projections "
        "load: the context-KV precompute reads raw weights only when every projection is unquantized",
        r.VLLM_DRAFT_QUANT,
        r.VLLM_QUANT_KV_034,
    ),
) + _QUANT_031[1:]

CURRENT = _profile(
    at_least("0.34", "release"),
    frozenset({"v1", "v2"}),
    _LOADS_034 + _QUANT_034 + (ASSISTANT_NONCAUSAL,),
    quant=_consumes_projections(quant.vllm_rule(True, str(r.VLLM_SELECTOR_DENSE))),
    advisories=(USE_SWA,),
    reads=READS_ASSISTANT,
    ignores=(FLAT_V_SCALE,),
    causality=causality.vllm_assistant_noncausal,
    read_keys=KEYS_028 + KEYS_031,
)

PROFILES = (NONE, NONCAUSAL, DFLASH_CAUSAL, LEGACY, BROKEN, DENSE_CONV, CURRENT_032, CURRENT_033, CURRENT)
