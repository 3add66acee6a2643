"""What every check family receives: the opened checkpoint, its spec, the target's config (read by
checkpoint/target.py), the options."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..checkpoint import Checkpoint
from ..checkpoint.target import TargetConfig
from ..engines import Profile
from ..formats.spec import DraftSpec


@dataclass(frozen=True)
class CheckOptions:
    scan: bool = False  # stream every float tensor through the NaN / Inf scan (reads tensor data)
    # engine profiles to judge against (verify --engine); empty: the newest of each engine that supports
    # this drafter's version (checks/causality.py)
    engines: tuple[Profile, ...] = ()
    # (done, total, tensor) after each tensor the scan read: where a long scan is (cli/progress.py)
    progress: Callable[[int, int, str], None] | None = None


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
