"""What every check family receives: the opened checkpoint, its spec, the target's config, the options."""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

from ..checkpoint import Checkpoint
from ..engines import Profile
from ..errors import SourceError
from ..formats.parse import load_config
from ..formats.spec import DraftSpec
from ..sources import LocalSource, Source, read_small


@dataclass(frozen=True)
class TargetConfig:
    """The target model's config.json, or why it could not be read (the pairing family reports it)."""
    label: str
    config: dict[str, Any] | None
    error: str | None = None


def read_target(target: str | os.PathLike[str] | Source) -> TargetConfig:
    source = LocalSource(target) if isinstance(target, (str, os.PathLike)) else target
    try:
        cfg, found = load_config(read_small(source, "config.json"))
    except SourceError as e:
        return TargetConfig(source.label, None, e.message)
    if cfg is None:
        return TargetConfig(source.label, None, "; ".join(f.message for f in found))
    return TargetConfig(source.label, cfg)


@dataclass(frozen=True)
class CheckOptions:
    scan: bool = False      # stream every float tensor through the NaN / Inf scan (reads tensor data)
    # engine profiles to judge against (verify --engine); empty: the newest of each engine that supports
    # this drafter's version (checks/causality.py)
    engines: tuple[Profile, ...] = ()


@dataclass
class CheckContext:
    checkpoint: Checkpoint
    target: TargetConfig | None = None
    options: CheckOptions = CheckOptions()
    # report sections a family adds beside its findings (e.g. the content scan's summary)
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def spec(self) -> DraftSpec | None:
        return self.checkpoint.spec
