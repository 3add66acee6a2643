"""config.json bytes -> dict -> the dialect's pydantic model -> DraftSpec, with findings instead of tracebacks.

The findings themselves are written by config_findings.py (DF1xx); this module only decides when. A config
the fast parse (formats/fast.py) accepts is not handed to pydantic at all, so reading a valid config
imports no pydantic; every other config is validated by the model, which writes the findings.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ..findings import Finding
from . import fast
from .assistant import special_ids
from .config_findings import (
    duplicate_keys,
    json_path,
    missing,
    out_of_range,
    unknown_key,
    unreadable,
    validation_findings,
)
from .detect import Detection, detect
from .families import family_keys
from .keys import OWN_KEYS, STANDARD_HF_KEYS
from .spec import V2_KEYS, CausalityKeys, DraftSpec

if TYPE_CHECKING:
    from .assistant_model import AssistantV1Config
    from .common import TransformerFields
    from .flat import FlatV1Config
    from .nested import NestedV1Config

# far above any drafter (1-8 layers) or target (under 200); bounds the per-layer work
MAX_DRAFT_LAYERS = 4096


def __getattr__(name: str) -> object:
    if name == "MODELS":  # its old home; the models load on first use (formats/models.py)
        from .models import MODELS  # lazy: formats.models loads only on this path

        return MODELS
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class _Duplicates:
    def __init__(self) -> None:
        self.found: list[str] = []

    def __call__(self, pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for k, v in pairs:
            if k in out:
                self.found.append(k)
            out[k] = v
        return out


def _no_constants(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON (NaN / Infinity literals are refused)")


def load_config(raw: bytes, *, file: str = "config.json") -> tuple[dict[str, Any] | None, list[Finding]]:
    """Parse config bytes; duplicate keys are reported (JSON parsers silently keep the last one)."""
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        return None, [unreadable(file, f"{file} is not UTF-8 text (byte {e.start})")]
    dups = _Duplicates()
    try:
        obj = json.loads(text, object_pairs_hook=dups, parse_constant=_no_constants)
    except RecursionError:
        return None, [unreadable(file, f"{file} is nested too deeply to be a config")]
    except ValueError as e:
        return None, [
            unreadable(
                file,
                f"{file} is not valid JSON: {e}",
                hint="fix the JSON syntax; a config is one JSON object",
            )
        ]
    if not isinstance(obj, dict):
        return None, [unreadable(file, f"{file} holds a JSON {type(obj).__name__}, not an object")]
    return obj, duplicate_keys(file, dups.found)


def _transformer_part(
    cfg: TransformerFields, base: str
) -> tuple[dict[str, Any], dict[str, str], list[Finding]]:
    """Spec fields and their JSON paths from the transformer half of either dialect."""
    p = (lambda k: f"{base}.{k}") if base else (lambda k: k)
    heads = cfg.num_attention_heads
    kv = cfg.num_key_value_heads or heads
    rope_scaling: dict[str, Any] | None = None
    if cfg.rope_parameters is not None:
        theta = cfg.rope_parameters.rope_theta
        rest = cfg.rope_parameters.model_dump(exclude={"rope_theta"})
        rope_scaling = rest if rest.get("rope_type", "default") != "default" or len(rest) > 1 else None
        theta_path = p("rope_parameters.rope_theta")
    else:
        theta = cfg.rope_theta if cfg.rope_theta is not None else 10000.0
        rope_scaling = cfg.rope_scaling
        theta_path = p("rope_theta")
    layer_types = tuple(cfg.layer_types) if cfg.layer_types is not None else (None,) * cfg.num_hidden_layers
    fields = dict(
        hidden_size=cfg.hidden_size,
        intermediate_size=cfg.intermediate_size,
        num_hidden_layers=cfg.num_hidden_layers,
        num_attention_heads=heads,
        num_key_value_heads=kv,
        head_dim=cfg.head_dim or cfg.hidden_size // heads,
        vocab_size=cfg.vocab_size,
        rms_norm_eps=cfg.rms_norm_eps,
        hidden_act=cfg.hidden_act,
        attention_bias=cfg.attention_bias,
        sliding_window=cfg.sliding_window,
        rope_theta=float(theta),
        rope_scaling=rope_scaling,
        max_position_embeddings=cfg.max_position_embeddings,
        layer_types=layer_types,
        dtype=cfg.dtype or cfg.torch_dtype,
    )
    paths = {k: p(k) for k in fields}
    paths["rope_theta"] = theta_path
    findings = []
    extra = dict(cfg.model_extra or {})
    for k in extra:
        if k not in STANDARD_HF_KEYS and k not in OWN_KEYS:
            findings.append(unknown_key(p(k)))
    # keys the spec models indirectly are kept too, so a conversion writes them back untouched
    for k in ("use_sliding_window", "max_window_layers", "tie_word_embeddings", "model_type", "torch_dtype"):
        if getattr(cfg, k) is not None and k not in extra:
            extra[k] = getattr(cfg, k)
    fields["transformer_extra"] = extra
    return fields, paths, findings


INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
# entries of any one list in a config: taps and layer_types are at most one per layer (MAX_DRAFT_LAYERS,
# and no target has more), so a 5M-entry tap list is refused before validation builds objects for it
MAX_CONFIG_LIST = 1 << 16


def _oversized_ints(config: Mapping[str, Any]) -> list[Finding]:
    """DF101 for every integer outside int64: Python accepts 10**30, but the engines (torch, C++, Rust)
    hold config integers in 64 bits and overflow or crash on it. Iterative, because a config may be
    nested as deeply as the JSON parser allowed."""
    out = []
    stack: list[tuple[tuple[Any, ...], Any]] = [((), config)]
    while stack:
        loc, node = stack.pop()
        if isinstance(node, list) and len(node) > MAX_CONFIG_LIST:
            out.append(
                out_of_range(
                    json_path(loc),
                    f"a list of {len(node):,} entries",
                    "is longer than any drafter needs (one entry per layer at most)",
                    f"<= {MAX_CONFIG_LIST:,} entries",
                )
            )
            continue
        # scalars are checked in place: only containers are queued, so the walk holds one entry per
        # container, not one per number (a config may hold millions)
        for k, v in node.items() if isinstance(node, dict) else enumerate(node):
            if isinstance(v, (dict, list)):
                stack.append((loc + (k,), v))
            elif isinstance(v, int) and not isinstance(v, bool) and not INT64_MIN <= v <= INT64_MAX:
                out.append(
                    out_of_range(
                        json_path(loc + (k,)),
                        v,
                        "does not fit in a 64-bit integer, which is "
                        "what every engine stores config integers in",
                        "int64",
                    )
                )
    return sorted(out, key=lambda f: f.field or "")


def to_spec(
    config: Mapping[str, Any], det: Detection | None = None
) -> tuple[DraftSpec | None, list[Finding]]:
    """Validate a config dict against its dialect's model and map it to a DraftSpec."""
    det = det or detect(config)
    if det.version is None or det.dialect is None:
        return None, []
    oversized = _oversized_ints(config)
    if oversized:
        return None, oversized
    parsed: Any = fast.parse(det.dialect, det.version, config)
    if parsed is None:
        from pydantic import ValidationError  # heavy: pydantic loads only when this runs

        from .models import MODELS  # lazy: formats.models loads only on this path

        try:
            parsed = MODELS[(det.dialect, det.version)].model_validate(dict(config))
        except ValidationError as e:
            return None, validation_findings(e)
    # Everything downstream builds per-layer lists; a hostile num_hidden_layers (10**9) would exhaust
    # memory, so an absurd count is refused here instead of being trusted.
    tl: Any = parsed.transformer_layer_config if det.dialect == "flat" else parsed
    if tl.num_hidden_layers > MAX_DRAFT_LAYERS:
        path = "transformer_layer_config.num_hidden_layers" if det.dialect == "flat" else "num_hidden_layers"
        return None, [
            out_of_range(
                path,
                tl.num_hidden_layers,
                f"a drafter has a handful of layers; more than {MAX_DRAFT_LAYERS} is refused",
                f"<= {MAX_DRAFT_LAYERS}",
            )
        ]
    spec: DraftSpec | None
    if det.dialect == "nested":
        spec, found = _nested_spec(parsed, det)
    elif det.dialect == "assistant":
        spec, found = _assistant_spec(parsed, config)
    else:
        spec, found = _flat_spec(parsed, det)
    if det.family is None or spec is None:
        return spec, found
    # a family's own keys are read by its loader (formats/families.py): not unknown, still kept verbatim
    known = family_keys(det.family.name)
    prefix = "transformer_layer_config." if det.dialect == "flat" else ""
    found = [f for f in found if not (f.code == "DF116" and (f.field or "").removeprefix(prefix) in known)]
    return spec.with_(family=det.family.name), found


def _scales(src: Any) -> dict[str, Any]:
    return dict(
        input_embedding_scale=1.0 if src.input_embedding_scale is None else src.input_embedding_scale,
        output_multiplier=1.0 if src.output_multiplier is None else src.output_multiplier,
        final_logit_softcapping=src.final_logit_softcapping or None,  # 0 means off
    )


def _v2(src: Any, version: str) -> dict[str, Any]:
    if version != "v2":
        return {}
    return {
        k: getattr(src, k) for k in ("conv_kernel_size", "conv_group_size", "selector_rank", "selector_top_k")
    }


# dflash_config keys from MiMo-style v1 drafters that vLLM's DFlash reads (formats/nested.py)
MIMO_KEYS = ("layer_ids", "use_swa", "swa_window_size", "attention_sink_bias", "attention_value_scale")

_NESTED_ROOT_DRAFTER_KEYS = (
    "architectures",
    "dflash_config",
    "is_causal",
    "num_target_layers",
    "target_hidden_size",
    "block_size",
    "mask_token_id",
)


def _nested_spec(cfg: NestedV1Config, det: Detection) -> tuple[DraftSpec, list[Finding]]:
    fields, paths, findings = _transformer_part(cfg, "")
    extra = dict(fields.pop("transformer_extra"))
    dc = cfg.dflash_config
    block, block_path = dc.block_size, "dflash_config.block_size"
    if block is None and cfg.block_size is not None:
        block, block_path = cfg.block_size, "block_size"
    mask, mask_path = dc.mask_token_id, "dflash_config.mask_token_id"
    if mask is None and cfg.mask_token_id is not None:
        mask, mask_path = cfg.mask_token_id, "mask_token_id"
    drafter_extra = dict(dc.model_extra or {})
    for k in drafter_extra:
        if k in V2_KEYS:
            continue  # v2 keys under a v1 architecture: the identity check reports DF303
        findings.append(unknown_key(f"dflash_config.{k}"))
    for k in ("sample_from_anchor",) + MIMO_KEYS:
        if getattr(dc, k) is not None:
            drafter_extra[k] = getattr(dc, k)
    v2 = _v2(dc, det.version or "v1")
    spec = DraftSpec(
        version=det.version or "v1",
        dialect="nested",
        **fields,
        target_layer_ids=tuple(dc.target_layer_ids),
        causality=CausalityKeys(
            is_causal=cfg.is_causal,
            dflash_causal=dc.causal,
            dflash_is_causal=_flag(drafter_extra.get("is_causal")),
        ),
        target_hidden_size=cfg.target_hidden_size,
        num_target_layers=cfg.num_target_layers,
        mask_token_id=mask,
        block_size=block,
        **v2,
        **_scales(dc),
        transformer_extra=extra,
        drafter_extra=drafter_extra,
    )
    paths.update(
        target_layer_ids="dflash_config.target_layer_ids",
        mask_token_id=mask_path,
        block_size=block_path,
        num_target_layers="num_target_layers",
        target_hidden_size="target_hidden_size",
        is_causal="is_causal",
        causal="dflash_config.causal",
        sample_from_anchor="dflash_config.sample_from_anchor",
        architectures="architectures",
        **{k: f"dflash_config.{k}" for k in MIMO_KEYS},
    )
    for k in (
        "conv_kernel_size",
        "conv_group_size",
        "selector_rank",
        "selector_top_k",
        "input_embedding_scale",
        "output_multiplier",
        "final_logit_softcapping",
    ):
        paths[k] = f"dflash_config.{k}"
    return spec.with_(paths=paths), findings


def _flag(value: object) -> bool | None:
    return value if isinstance(value, bool) else None


def _flat_spec(cfg: FlatV1Config, det: Detection) -> tuple[DraftSpec, list[Finding]]:
    fields, paths, findings = _transformer_part(cfg.transformer_layer_config, "transformer_layer_config")
    extra = dict(fields.pop("transformer_extra"))
    drafter_extra = dict(cfg.model_extra or {})
    # the target's layer count, which convert carries at the top level (SGLang guesses taps from it)
    layers = drafter_extra.pop("num_target_layers", None)
    num_target_layers = (
        layers if isinstance(layers, int) and not isinstance(layers, bool) and layers > 0 else None
    )
    if layers is not None and num_target_layers is None:
        drafter_extra["num_target_layers"] = layers
    for k in drafter_extra:
        if k not in STANDARD_HF_KEYS and k not in OWN_KEYS:
            findings.append(unknown_key(k, "speculators or vLLM"))
    for k in (
        "architectures",
        "speculators_config",
        "speculators_version",
        "draft_vocab_size",
        "sample_from_anchor",
    ):
        value = getattr(cfg, k)
        if value is not None:
            drafter_extra[k] = value.model_dump(exclude_none=False) if hasattr(value, "model_dump") else value
    v2 = _v2(cfg, det.version or "v1")
    spec = DraftSpec(
        version=det.version or "v1",
        dialect="flat",
        **fields,
        target_layer_ids=tuple(a - 1 for a in cfg.aux_hidden_state_layer_ids),
        causality=CausalityKeys(sliding_window_non_causal=cfg.sliding_window_non_causal),
        target_hidden_size=cfg.target_hidden_size,
        mask_token_id=cfg.mask_token_id,
        block_size=cfg.block_size,
        **v2,
        **_scales(cfg),
        num_target_layers=num_target_layers,
        transformer_extra=extra,
        drafter_extra=drafter_extra,
    )
    paths.update(
        target_layer_ids="aux_hidden_state_layer_ids",
        mask_token_id="mask_token_id",
        block_size="block_size",
        target_hidden_size="target_hidden_size",
        sliding_window_non_causal="sliding_window_non_causal",
        draft_vocab_size="draft_vocab_size",
        sample_from_anchor="sample_from_anchor",
        architectures="architectures",
        num_target_layers="num_target_layers",
    )
    for k in (
        "conv_kernel_size",
        "conv_group_size",
        "selector_rank",
        "selector_top_k",
        "input_embedding_scale",
        "output_multiplier",
        "final_logit_softcapping",
    ):
        paths[k] = k
    return spec.with_(paths=paths), findings


_ASSISTANT_DRAFTER_KEYS = (
    "architectures",
    "target_layer_ids",
    "block_size",
    "mask_token_id",
    "is_causal",
    "num_target_layers",
    "target_hidden_size",
)


# what transformers' MuseGlimmerAssistantConfig fills in when the export leaves a key out, and so what the
# export means (vLLM reads it through the same config class): every layer sliding, a 2048-token window
# (released.TF_DEFAULT_SLIDING, TF_SLIDING_INT)
ASSISTANT_DEFAULT_WINDOW = 2048


def _assistant_spec(cfg: AssistantV1Config, raw: Mapping[str, Any]) -> tuple[DraftSpec | None, list[Finding]]:
    """One flat root: transformer and DFlash keys side by side; unknown keys stay at the root (transformer_extra)."""
    fields, paths, findings = _transformer_part(cfg, "")
    if cfg.layer_types is None:
        fields["layer_types"] = ("sliding_attention",) * cfg.num_hidden_layers
    if "sliding_window" not in raw:
        fields["sliding_window"] = ASSISTANT_DEFAULT_WINDOW
    extra = dict(fields.pop("transformer_extra"))
    vocab_from = "config"
    if fields["vocab_size"] is None:
        # the export borrows the target's embedding and head; judge with the bound its own ids give
        ids = special_ids(cfg.model_dump())
        if not ids:
            return None, [
                missing(
                    "vocab_size",
                    "vocab_size is absent and no mask / special token id bounds "
                    "the vocabulary; the assistant export borrows the target's: pass --target",
                )
            ]
        fields["vocab_size"], vocab_from = max(ids) + 1, "bound"
    spec = DraftSpec(
        version="v1",
        dialect="assistant",
        vocab_from=vocab_from,
        **fields,
        target_layer_ids=tuple(cfg.target_layer_ids),
        causality=CausalityKeys(is_causal=cfg.is_causal),
        target_hidden_size=cfg.target_hidden_size,
        num_target_layers=cfg.num_target_layers,
        mask_token_id=cfg.mask_token_id,
        block_size=cfg.block_size,
        transformer_extra=extra,
        drafter_extra={"architectures": cfg.architectures} if cfg.architectures else {},
    )
    paths.update({k: k for k in _ASSISTANT_DRAFTER_KEYS})
    return spec.with_(paths=paths), findings
