"""The target model's config.json, read once for the pairing checks, the conversions and the smoke."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

from ..errors import SourceError
from ..formats.parse import load_config
from ..sources import LocalSource, Source, read_small


@dataclass(frozen=True)
class TargetConfig:
    """The target model's config.json, or why it could not be read (the pairing family reports it)."""

    label: str
    config: dict[str, Any] | None
    error: str | None = None
    source: Source | None = field(default=None, compare=False)  # for its tokenizer (checks/tokenizer.py)


def read_target(target: str | os.PathLike[str] | Source) -> TargetConfig:
    source = LocalSource(target) if isinstance(target, (str, os.PathLike)) else target
    try:
        cfg, found = load_config(read_small(source, "config.json"))
    except SourceError as e:
        return TargetConfig(source.label, None, e.message, source)
    if cfg is None:
        return TargetConfig(source.label, None, "; ".join(f.message for f in found), source)
    return TargetConfig(source.label, cfg, source=source)
