"""The two config writers (docs/contract.md#nested-and-flat-field-by-field): nested <-> flat, dict to
dict, every source key accounted for.

Each writer walks every key of the source and either keeps it, moves it (same value, new place),
changes it (aux = target + 1), or drops it with a reason; keys it adds are recorded too. Unknown keys
move with their level: nested root <-> transformer_layer_config, dflash_config <-> flat top level.
Values are carried as parsed, so JSON numbers and nesting come out exactly as they went in.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from ..errors import ConversionError, ConversionUsageError
from ..formats.keys import TOKENIZER_KEY
from ..formats.spec import V2_KEYS, DraftSpec
from ..quant.config import CONFIG_KEYS
from .exactness import flat_causality_for_nested, nested_causality_for_flat

SPECULATORS_VERSION = "0.9.0"  # the flat layout written is the one speculators 0.9.0 saves
SCALE_KEYS = ("input_embedding_scale", "output_multiplier", "final_logit_softcapping")
DRAFTER_KEYS = ("mask_token_id", "block_size", *V2_KEYS, *SCALE_KEYS)
# root keys of the nested dialect that are not transformer keys
NESTED_ROOT_DRAFTER = (
    "architectures",
    "dflash_config",
    "is_causal",
    "num_target_layers",
    "target_hidden_size",
    "block_size",
    "mask_token_id",
    "auto_map",
)
# keys the flat writer puts at its top level itself; an unknown dflash_config key may not take them
FLAT_TOP_RESERVED = frozenset(
    {
        "architectures",
        "speculators_model_type",
        "speculators_version",
        "speculators_config",
        "aux_hidden_state_layer_ids",
        "draft_vocab_size",
        "sample_from_anchor",
        "sliding_window_non_causal",
        "target_hidden_size",
        "transformer_layer_config",
        "auto_map",
        "dtype",
        "transformers_version",
        "tie_word_embeddings",
        "num_target_layers",
        *DRAFTER_KEYS,
    }
)
# Hugging Face keys both halves of a flat config may carry; the nested root holds one of each
SHARED_HF = ("dtype", "torch_dtype", "transformers_version", "tie_word_embeddings")
ARCH = {"v1": "DFlashDraftModel", "v2": "DFlash2DraftModel"}
ALGO = {"v1": "dflash", "v2": "dflash2"}

Action = Literal["moved", "changed", "dropped", "added"]


@dataclass(frozen=True)
class KeyChange:
    action: Action
    src: str | None  # JSON path in the source config
    dst: str | None  # JSON path in the written config
    value: Any = None  # the written value (moved / changed / added) or the dropped one
    old: Any = None  # the source value of a changed key
    reason: str = ""

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"action": self.action, "from": self.src, "to": self.dst, "value": self.value}
        if self.action == "changed":
            out["old"] = self.old
        if self.reason:
            out["reason"] = self.reason
        return out


@dataclass(frozen=True)
class Verifier:
    name_or_path: str | None
    architectures: tuple[str, ...] = ()


class _Writer:
    def __init__(self) -> None:
        self.changes: list[KeyChange] = []
        self.notes: list[str] = []

    def move(self, out: dict[str, Any], key: str, value: Any, src: str, dst: str) -> None:
        out[key] = value
        if src != dst:
            self.changes.append(KeyChange("moved", src, dst, value))

    def drop(self, src: str, value: Any, reason: str) -> None:
        self.changes.append(KeyChange("dropped", src, None, value, reason=reason))

    def add(self, out: dict[str, Any], key: str, value: Any, dst: str, reason: str) -> None:
        out[key] = value
        self.changes.append(KeyChange("added", None, dst, value, reason=reason))


def _only_value(src: Mapping[str, Any], dc: Mapping[str, Any], key: str) -> tuple[Any, str | None]:
    """A key the old nested dialect may give at the top level and in dflash_config: one value or a refusal."""
    top, inner = src.get(key), dc.get(key)
    if top is not None and inner is not None and top != inner:
        raise ConversionError(
            f"{key} = {top} at the top level but dflash_config.{key} = {inner}; engines read "
            "different ones, so there is no single value to convert",
            hint=f"keep one value (dflash_config.{key}) and convert again",
        )
    if inner is not None:
        return inner, f"dflash_config.{key}"
    return (top, key) if top is not None else (None, None)


# MiMo-style dflash_config keys (formats/parse.py MIMO_KEYS) with no counterpart in the speculators config
NO_FLAT_HOME = ("use_swa", "swa_window_size", "attention_sink_bias")


def nested_to_flat(
    src: Mapping[str, Any], spec: DraftSpec, verifier: Verifier | None
) -> tuple[dict[str, Any], list[KeyChange], list[str]]:
    verifier = _named_verifier(verifier)
    w = _Writer()
    out: dict[str, Any] = {}
    tlc: dict[str, Any] = {}
    dc: Mapping[str, Any] = src["dflash_config"]
    block, block_src = _only_value(src, dc, "block_size")
    _, mask_src = _only_value(src, dc, "mask_token_id")
    if block is None:
        raise ConversionError(
            "no block_size: the flat dialect derives speculative_tokens = block_size - 1 from it",
            hint="set dflash_config.block_size to the block length the drafter was trained with",
        )
    swa = [k for k in NO_FLAT_HOME if dc.get(k) not in (None, False)]
    if swa:
        raise ConversionError(
            f"dflash_config carries {', '.join(swa)} (a MiMo-style sliding window with attention "
            "sinks, which vLLM's DFlash reads from the nested config); the flat dialect has no "
            "key for them and speculators builds no sink parameters, so the converted drafter "
            "would lose their meaning",
            hint="serve it from the nested dialect (vLLM)",
        )
    swnc = nested_causality_for_flat(spec)
    sources = {"block_size": block_src, "mask_token_id": mask_src}
    _flat_top_level(src, sources, w, out, tlc)
    _flat_from_dflash_config(dc, sources, w, out)
    _flat_added(spec, verifier, block, swnc, w, out, tlc)
    return out, w.changes, w.notes


def _named_verifier(verifier: Verifier | None) -> Verifier:
    """The verifier the flat dialect records, or the refusal that says how to name it."""
    if verifier is None or not verifier.name_or_path:
        raise ConversionUsageError(
            "the flat dialect names its verifier (speculators_config.verifier) and the nested "
            "config does not say which model that is",
            hint="pass --target DIR (the target model) or --verifier-name ORG/NAME",
        )
    if not verifier.architectures:
        raise ConversionUsageError(
            "the flat dialect records the verifier's architectures (speculators_config."
            f"verifier.architectures) and nothing says what {verifier.name_or_path} is",
            hint="pass --target DIR (its config.json gives them) or --verifier-arch CLASS",
        )
    return verifier


def _flat_top_level(
    src: Mapping[str, Any],
    sources: Mapping[str, str | None],
    w: _Writer,
    out: dict[str, Any],
    tlc: dict[str, Any],
) -> None:
    """The nested config's top-level keys: kept at the top, moved into transformer_layer_config, or dropped.
    `sources`: where block_size and mask_token_id are read from (the one place written)."""
    for k, v in src.items():
        if k == "dflash_config":
            continue
        if k in ("block_size", "mask_token_id"):
            if sources[k] == k:
                w.move(out, k, v, k, k)
            else:
                w.drop(k, v, f"same value as dflash_config.{k}, which is written as {k}")
        elif k == "is_causal":
            w.drop(k, v, "causality is written as sliding_window_non_causal")
        elif k == "num_target_layers":
            out[k] = v  # an extra top-level field speculators keeps, listed so the plan shows it survives
            w.changes.append(
                KeyChange(
                    "moved",
                    k,
                    k,
                    v,
                    reason="kept at the top level: the nested engines (SGLang "
                    "guesses taps from it) read it after a conversion back",
                )
            )
        elif k == "auto_map":
            w.drop(k, v, "remote code of the nested repository; speculators loads by speculators_model_type")
        elif k == TOKENIZER_KEY:
            w.move(out, k, v, k, k)  # ours, at the root in every dialect (checkpoint/tokenizer.py)
        elif k in ("architectures", "target_hidden_size", "dtype", "transformers_version", *CONFIG_KEYS):
            w.move(out, k, v, k, k)  # quantization_config: top level, where from_pretrained reads it
        elif k == "tie_word_embeddings":
            w.move(out, k, v, k, k)
            w.move(tlc, k, v, k, f"transformer_layer_config.{k}")  # speculators writes it in both places
        else:
            w.move(tlc, k, v, k, f"transformer_layer_config.{k}")


def _flat_from_dflash_config(
    dc: Mapping[str, Any], sources: Mapping[str, str | None], w: _Writer, out: dict[str, Any]
) -> None:
    """dflash_config's keys, at the flat config's top level (the taps as speculators counts them)."""
    for k, v in dc.items():
        path = f"dflash_config.{k}"
        if k == "target_layer_ids":
            aux = [t + 1 for t in v]
            out["aux_hidden_state_layer_ids"] = aux
            w.changes.append(
                KeyChange(
                    "changed",
                    path,
                    "aux_hidden_state_layer_ids",
                    aux,
                    v,
                    "speculators counts hidden states, embedding output first: aux = target + 1",
                )
            )
        elif k in ("block_size", "mask_token_id"):
            if sources[k] == path:
                w.move(out, k, v, path, k)
        elif k == "causal":
            w.drop(path, v, "causality is written as sliding_window_non_causal")
        elif k in DRAFTER_KEYS or k == "sample_from_anchor":
            w.move(out, k, v, path, k)
        elif k in FLAT_TOP_RESERVED:
            raise ConversionError(
                f"{path} is an unknown key whose name the flat dialect uses for its own field "
                f"{k}; carrying it over would change its meaning",
                hint=f"rename or remove {path}",
            )
        else:
            w.move(out, k, v, path, k)


def _flat_added(
    spec: DraftSpec,
    verifier: Verifier,
    block: Any,
    swnc: bool,
    w: _Writer,
    out: dict[str, Any],
    tlc: dict[str, Any],
) -> None:
    """The keys the flat dialect has and the nested config does not: the discriminator, the verifier, the
    proposal, the causality flag, and the defaults stated."""
    version = spec.version
    if "model_type" not in tlc:
        w.add(
            tlc,
            "model_type",
            "qwen3",
            "transformer_layer_config.model_type",
            "speculators builds the transformer config from its model_type",
        )
    out["transformer_layer_config"] = tlc
    if "architectures" not in out:
        w.add(out, "architectures", [ARCH[version]], "architectures", "the drafter class")
    w.add(
        out,
        "speculators_model_type",
        ALGO[version],
        "speculators_model_type",
        "the flat dialect's discriminator",
    )
    w.add(
        out,
        "speculators_version",
        SPECULATORS_VERSION,
        "speculators_version",
        "the speculators release whose layout is written",
    )
    w.add(
        out, "draft_vocab_size", spec.vocab_size, "draft_vocab_size", "DFlash drafts over the full vocabulary"
    )
    if "sample_from_anchor" not in out:
        w.add(out, "sample_from_anchor", False, "sample_from_anchor", "the nested default, stated")
    w.add(
        out,
        "sliding_window_non_causal",
        swnc,
        "sliding_window_non_causal",
        f"from the resolved causality ({'bidirectional' if swnc else 'causal'} sliding layers)",
    )
    if "target_hidden_size" not in out:
        w.add(
            out,
            "target_hidden_size",
            None,
            "target_hidden_size",
            "speculators writes it (null = hidden_size)",
        )
    proposal = {
        "accept_tolerance": 0.0,
        "proposal_type": "greedy",
        "speculative_tokens": block - 1,
        "verifier_accept_k": 1,
    }
    w.add(
        out,
        "speculators_config",
        {
            "algorithm": ALGO[version],
            "default_proposal_method": "greedy",
            "proposal_methods": [proposal],
            "verifier": {
                "architectures": list(verifier.architectures),
                "name_or_path": verifier.name_or_path,
            },
        },
        "speculators_config",
        "greedy proposal with speculative_tokens = block_size - 1 and the verifier",
    )
    w.notes.append(
        f"causality: sliding_window_non_causal = {str(swnc).lower()} reproduces every layer's "
        "resolved causality in speculators and in vLLM's flat loader"
    )


def flat_to_nested(
    src: Mapping[str, Any], spec: DraftSpec, num_target_layers: int | None
) -> tuple[dict[str, Any], list[KeyChange], list[str]]:
    w = _Writer()
    root: dict[str, Any] = {}
    dc: dict[str, Any] = {}
    version = spec.version
    tlc: Mapping[str, Any] = src["transformer_layer_config"]
    clash = [k for k in tlc if k in NESTED_ROOT_DRAFTER and tlc[k] is not None]
    if clash:
        raise ConversionError(
            f"transformer_layer_config carries {clash}, which the nested dialect reads as "
            "drafter fields at its root; carrying them over would change their meaning",
            hint="remove them from transformer_layer_config",
        )
    draft_vocab = src.get("draft_vocab_size")
    if draft_vocab is not None and draft_vocab != spec.vocab_size:
        raise ConversionError(
            f"draft_vocab_size = {draft_vocab} is a reduced draft vocabulary (vocab_size = "
            f"{spec.vocab_size}); the nested dialect drafts over the full target vocabulary "
            "and has no t2d / d2t maps",
            hint="only full-vocabulary drafters convert",
        )
    for k, v in tlc.items():
        if k in SHARED_HF and k in src and src[k] != v and k != "transformers_version":
            raise ConversionError(
                f"{k} = {src[k]!r} at the top level but transformer_layer_config.{k} = {v!r}; "
                "the nested config has one place for it",
                hint=f"make the two {k} values agree",
            )
        if k in NESTED_ROOT_DRAFTER:  # null here; the nested root holds the drafter's own value
            w.drop(f"transformer_layer_config.{k}", v, "null; at the nested root this is a drafter field")
            continue
        w.move(root, k, v, f"transformer_layer_config.{k}", k)
    is_causal, note = flat_causality_for_nested(spec)
    _nested_from_top_level(src, tlc, is_causal, num_target_layers, w, root, dc)
    if "architectures" not in root:
        w.add(root, "architectures", [ARCH[version]], "architectures", "the nested dialect routes on it")
    if is_causal is not None:
        w.add(root, "is_causal", is_causal, "is_causal", "resolved causality, explicit for vLLM and SGLang")
        w.add(
            dc, "causal", is_causal, "dflash_config.causal", "the same value for vLLM before DFlash2 support"
        )
    w.notes.append("causality: " + note)
    if num_target_layers is not None and "num_target_layers" not in root:
        w.add(
            root,
            "num_target_layers",
            num_target_layers,
            "num_target_layers",
            "the target's num_hidden_layers",
        )
    root["dflash_config"] = dc
    return root, w.changes, w.notes


def _nested_from_top_level(
    src: Mapping[str, Any],
    tlc: Mapping[str, Any],
    is_causal: bool | None,
    num_target_layers: int | None,
    w: _Writer,
    root: dict[str, Any],
    dc: dict[str, Any],
) -> None:
    """The flat config's top-level keys: at the nested root, into dflash_config (the taps as decoder layers),
    or dropped with the reason."""
    for k, v in src.items():
        if k == "transformer_layer_config":
            continue
        if k == "aux_hidden_state_layer_ids":
            ids = [a - 1 for a in v]
            dc["target_layer_ids"] = ids
            w.changes.append(
                KeyChange(
                    "changed",
                    k,
                    "dflash_config.target_layer_ids",
                    ids,
                    v,
                    "the nested dialect counts decoder layers: target = aux - 1",
                )
            )
        elif k in ("architectures", TOKENIZER_KEY) or k in CONFIG_KEYS:
            w.move(root, k, v, k, k)
        elif k in DRAFTER_KEYS:
            w.move(dc, k, v, k, f"dflash_config.{k}")
        elif k == "speculators_model_type":
            w.drop(k, v, "the nested dialect routes on architectures")
        elif k == "speculators_version":
            w.drop(k, v, "speculators bookkeeping")
        elif k == "speculators_config":
            name = (v.get("verifier") or {}).get("name_or_path") if isinstance(v, dict) else None
            w.drop(
                k,
                v,
                "proposal and verifier settings of speculators; nested engines take them from the serving "
                f"command (converting back: --verifier-name {name or 'NAME'})",
            )
        elif k == "auto_map":
            w.drop(k, v, "points at the speculators config.py, which is not carried over")
        elif k == "draft_vocab_size":
            w.drop(k, v, "equals vocab_size")
        elif k == "sample_from_anchor":
            if v:
                w.move(dc, k, v, k, f"dflash_config.{k}")
            else:
                w.drop(k, v, "false is the nested default")
        elif k == "sliding_window_non_causal":
            w.drop(
                k,
                v,
                "written as explicit is_causal"
                if is_causal is not None
                else "the nested per-layer default reproduces it",
            )
        elif k == "target_hidden_size":
            if v is None:
                w.drop(k, v, "null means hidden_size, the nested default")
            else:
                w.move(root, k, v, k, k)
        elif k in SHARED_HF:
            if k in tlc:
                if tlc[k] != v:
                    w.drop(k, v, f"transformer_layer_config.{k} = {tlc[k]!r} is kept")
            else:
                w.move(root, k, v, k, k)
        elif k == "num_target_layers":
            if num_target_layers is not None and v != num_target_layers:
                raise ConversionError(
                    f"num_target_layers = {v} but the target has {num_target_layers} layers",
                    hint="pass the target the drafter was trained for, or fix num_target_layers",
                )
            w.move(root, k, v, k, k)
        elif k in ("target_layer_ids", "causal"):
            raise ConversionError(
                f"{k} is an unknown top-level key of the flat config, but dflash_config.{k} is "
                "a field the nested engines read; carrying it over would change its meaning",
                hint=f"remove or rename the top-level {k}",
            )
        else:
            w.move(dc, k, v, k, f"dflash_config.{k}")
