"""Which dialect and which DFlash version a config is, or which other drafter it is
(docs/contract.md#telling-drafters-apart)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any, Literal

from .assistant import is_assistant
from .families import Family, family_of
from .spec import V2_KEYS

V2_ARCH = "DFlash2DraftModel"
V1_ARCH = "DFlashDraftModel"


@dataclass(frozen=True)
class Detection:
    dialect: Literal["nested", "flat", "gguf", "assistant"] | None
    version: Literal["v1", "v2"] | None  # what the engines will load it as
    other: str | None = None  # name of a non-DFlash drafter, when recognised
    arch_version: Literal["v1", "v2"] | None = None  # what `architectures` says
    field_version: Literal["v1", "v2"] | None = None  # what the discriminator / v2 keys say
    evidence: tuple[str, ...] = ()  # the keys / tensor names that name `other` despite a DFlash label
    family: Family | None = None  # a DFlash family beside plain DFlash / DFlash2 (formats/families.py)

    @property
    def is_dflash(self) -> bool:
        return self.version is not None


def _arch_version(archs: Iterable[str]) -> Literal["v1", "v2"] | None:
    archs = list(archs)
    if V2_ARCH in archs:
        return "v2"
    if V1_ARCH in archs:
        return "v1"
    return None


# DSpark's own keys (its markov head and confidence head; DeepSeek's published config and vLLM's
# config/speculative.py: markov_rank, markov_head_type, dspark_bonus_anchor) and tensors. No DFlash drafter has
# them, so they name a DSpark checkpoint even under a DFlash architecture or dflash_config: SGLang and the
# reference would load its trunk, skip both heads and mis-draft.
_DSPARK_KEY_PREFIXES = ("markov_", "dspark_", "confidence_head")
_DSPARK_KEYS = frozenset({"enable_confidence_head"})
_DSPARK_TENSORS = ("markov_head.", "confidence_head.")


def _dspark_key(k: str) -> bool:
    return k in _DSPARK_KEYS or k.startswith(_DSPARK_KEY_PREFIXES)


def dspark_evidence(config: Mapping[str, Any], tensor_names: Iterable[str] = ()) -> tuple[str, ...]:
    """The DSpark keys (top level or in dflash_config) and head tensors a checkpoint carries (a sample)."""
    dc = config.get("dflash_config")
    keys = [k for k in config if _dspark_key(k)]
    keys += [f"dflash_config.{k}" for k in (dc if isinstance(dc, dict) else {}) if _dspark_key(k)]
    heads = sorted(
        {
            n.split(".", 1)[0] + ".*"
            for n in tensor_names
            if n.removeprefix("model.").startswith(_DSPARK_TENSORS)
        }
    )
    return tuple(sorted(keys)) + tuple(heads)


def _other_drafter(config: Mapping[str, Any], archs: list[str]) -> str | None:
    joined = " ".join(archs).lower()
    smt = str(config.get("speculators_model_type", "")).lower()
    if "dspark" in joined or smt == "dspark" or dspark_evidence(config):
        return "DSpark"
    if "eagle3" in joined or "eagle3" in smt or "eagle_config" in config:
        return "EAGLE-3"
    if "eagle" in joined or smt.startswith("eagle"):
        return "EAGLE"
    if "mtp" in smt or "medusa" in joined or smt == "medusa":
        return "Medusa" if "medusa" in joined + smt else "MTP"
    if smt:
        return f"speculators '{config.get('speculators_model_type')}'"
    return None


def detect_tensors(names: Iterable[str]) -> Literal["v1", "v2"]:
    """From tensor names alone: any conv or selector tensor means v2 weights."""
    for n in names:
        if ".attention_conv." in n or ".mlp_conv." in n or n.startswith("candidate_selector."):
            return "v2"
    return "v1"


def detect(config: Mapping[str, Any], tensor_names: Iterable[str] = ()) -> Detection:
    """tensor_names (optional): the stored tensors, which also identify the assistant dialect and a family."""
    names = list(tensor_names)
    det = _detect(config, names)
    family = family_of(config, names) if det.is_dflash else None
    return det if family is None else replace(det, family=family)


def _detect(config: Mapping[str, Any], tensor_names: Iterable[str] = ()) -> Detection:
    raw_archs = config.get("architectures")
    archs = [a for a in raw_archs if isinstance(a, str)] if isinstance(raw_archs, list) else []
    arch_v = _arch_version(archs)
    names = list(tensor_names)
    evidence = dspark_evidence(config, names)
    if evidence:
        return Detection(None, None, other="DSpark", arch_version=arch_v, evidence=evidence)
    smt = config.get("speculators_model_type")
    if smt is not None:
        if smt in ("dflash", "dflash2"):
            field_v: Literal["v1", "v2"] = "v2" if smt == "dflash2" else "v1"
            return Detection("flat", field_v, arch_version=arch_v, field_version=field_v)
        return Detection("flat", None, other=_other_drafter(config, archs), arch_version=arch_v)
    dc = config.get("dflash_config")
    has_v2_keys = isinstance(dc, dict) and any(k in dc for k in V2_KEYS)
    keys_v: Literal["v1", "v2"] | None = ("v2" if has_v2_keys else "v1") if isinstance(dc, dict) else None
    if arch_v is not None:
        return Detection("nested", arch_v, arch_version=arch_v, field_version=keys_v)
    other = _other_drafter(config, archs)
    if other is None and is_assistant(config, names):
        return Detection("assistant", "v1", field_version="v1")
    if other is None and keys_v is not None:
        return Detection("nested", keys_v, field_version=keys_v)
    return Detection(None, None, other=other)
