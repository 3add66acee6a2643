"""The loader guard for runtime authors: refuse a checkpoint of the other DFlash version before any tensor is read."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any, Literal

from ..checkpoint import open_checkpoint
from ..checkpoint.layout import v2_bytes
from ..errors import ConfigError, VersionMismatchError
from ..formats.detect import detect, detect_tensors


def require_version(
    path_or_config: str | os.PathLike[str] | Mapping[str, Any], expected: Literal["v1", "v2"]
) -> Literal["v1", "v2"]:
    """Return the version when it is `expected`; raise VersionMismatchError otherwise.

    Given a config dict, decides from the config (architecture, discriminator and v2 keys). Given a
    path, also reads the safetensors headers (never tensor data): conv / selector tensors under a v1
    architecture are what a v1 loader would silently drop.
    """
    if expected not in ("v1", "v2"):
        raise ValueError(f"expected must be 'v1' or 'v2', not {expected!r}")
    label = None
    if isinstance(path_or_config, Mapping):
        config: Mapping[str, Any] | None = path_or_config
        tensors = None
    else:
        ckpt = open_checkpoint(path_or_config)
        label, config, tensors = ckpt.label, ckpt.config, ckpt.tensors
        if config is None:
            raise ConfigError("config.json is missing or unreadable", path=label)
    det = detect(config, tensors or ())  # type: ignore[arg-type]
    if not det.is_dflash:
        raise ConfigError(f"not a DFlash drafter{f' ({det.other})' if det.other else ''}", path=label)
    claims = {det.version, det.arch_version, det.field_version} - {None}
    if len(claims) > 1:
        raise VersionMismatchError(
            "config contradicts itself: architecture and fields name different DFlash versions",
            expected=expected,
            found="/".join(sorted(claims)),  # type: ignore[arg-type]
            path=label,
        )
    found = det.version
    dropped = 0
    if tensors:
        stored = detect_tensors(tensors)
        if stored != found:
            dropped = v2_bytes(tensors.values())
            raise VersionMismatchError(
                f"the config says {found} but the tensors are {stored}"
                + (
                    f": a v1 loader would drop {dropped:,} bytes of conv / selector weights"
                    if dropped
                    else ""
                ),
                expected=expected,
                found=stored,
                dropped_bytes=dropped,
                path=label,
            )
        dropped = v2_bytes(tensors.values())
    if found != expected:
        msg = f"this is a DFlash {found} checkpoint, the loader expects {expected}"
        if found == "v2" and expected == "v1":
            msg += (
                f"; loading it as v1 silently drops the conv and selector"
                f"{f' ({dropped:,} bytes)' if dropped else ''}"
            )
        raise VersionMismatchError(
            msg,
            expected=expected,
            found=found,  # type: ignore[arg-type]
            dropped_bytes=dropped,
            path=label,
        )
    return found
