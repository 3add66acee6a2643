"""Which dialect and which DFlash version a config is, or which other drafter it is (CONTRACT §6)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Literal, Mapping

from .spec import V2_KEYS

V2_ARCH = "DFlash2DraftModel"
V1_ARCH = "DFlashDraftModel"


@dataclass(frozen=True)
class Detection:
    dialect: Literal["nested", "flat", "gguf"] | None
    version: Literal["v1", "v2"] | None   # what the engines will load it as
    other: str | None = None               # name of a non-DFlash drafter, when recognised
    arch_version: Literal["v1", "v2"] | None = None    # what `architectures` says
    field_version: Literal["v1", "v2"] | None = None   # what the discriminator / v2 keys say

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


def _other_drafter(config: Mapping[str, Any], archs: list[str]) -> str | None:
    joined = " ".join(archs).lower()
    smt = str(config.get("speculators_model_type", "")).lower()
    if "dspark" in joined or smt == "dspark" or any(k.startswith("markov_") for k in config):
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


def detect(config: Mapping[str, Any]) -> Detection:
    raw_archs = config.get("architectures")
    archs = [a for a in raw_archs if isinstance(a, str)] if isinstance(raw_archs, list) else []
    arch_v = _arch_version(archs)
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
    if other is None and keys_v is not None:
        return Detection("nested", keys_v, field_version=keys_v)
    return Detection(None, None, other=other)
