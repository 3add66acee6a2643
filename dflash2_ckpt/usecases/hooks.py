"""What the pre-commit hooks run: file names in, one verification per checkpoint directory out.

pre-commit passes the changed files that match a hook's pattern, possibly many per checkpoint (a
config, an index, a dozen shards); each directory is checked once. Neither level imports torch, so
the hooks stay light; the smoke hook shells out to `dflash2-ckpt smoke`, which needs the [smoke] extra.
"""
from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, Iterable, Literal

from ..checkpoint import CONFIG, INDEX
from ..findings import Verdict
from ..sources import LocalSource, SourceBase
from .verify import Report, verify

Level = Literal["config", "headers"]


def is_checkpoint_file(name: str) -> bool:
    base = os.path.basename(name)
    return base in (CONFIG, INDEX) or base.endswith((".safetensors", ".gguf"))


def checkpoint_dirs(files: Iterable[str | os.PathLike[str]]) -> list[Path]:
    """The directories holding the given checkpoint files, each once, in first-seen order; a GGUF file is a
    checkpoint of its own (a folder may hold several quantizations)."""
    out: dict[Path, Path] = {}
    for f in files:
        if not is_checkpoint_file(os.fspath(f)):
            continue
        d = Path(f) if os.fspath(f).endswith(".gguf") else Path(f).parent
        out.setdefault(d.resolve(), d)
    return list(out.values())


class ConfigOnlySource(SourceBase):
    """A checkpoint directory seen through config.json alone: the light hook never opens the weights."""

    def __init__(self, directory: str | os.PathLike[str]) -> None:
        self._inner = LocalSource(directory)
        self.label = self._inner.label

    def list_files(self) -> list[str]:
        return [CONFIG] if CONFIG in self._inner.list_files() else []

    def file_size(self, name: str) -> int:
        return self._inner.file_size(name)

    def read_range(self, name: str, start: int, length: int) -> bytes:
        return self._inner.read_range(name, start, length)

    def local_path(self, name: str) -> Path | None:
        return self._inner.local_path(name)


def check_dirs(dirs: Iterable[Path], level: Level, *, select: Iterable[str] = (), ignore: Iterable[str] = (),
               target: str | None = None) -> list[tuple[Path, Report]]:
    """One Report per directory. At config level the file checks (DF6xx) are off: no weights are looked at."""
    out = []
    for d in dirs:
        if level == "config":
            report = verify(ConfigOnlySource(d), target=target, select=select, ignore=[*ignore, "DF6"])
        else:
            report = verify(LocalSource(d), target=target, select=select, ignore=ignore)
        out.append((d, report))
    return out


@dataclass(frozen=True)
class HookRun(Verdict):
    """One hook run: a verify report per checkpoint directory (its `parts`, rendered one by one)."""
    level: Level
    strict: bool
    parts: tuple[Report, ...]
    kind: ClassVar[str] = "hook"

    @property
    def subject(self) -> str:
        return f"pre-commit {self.level} checks"

    @property
    def findings(self) -> tuple[Any, ...]:
        return tuple(f for p in self.parts for f in p.findings)

    def failed(self, strict: bool = False) -> bool:
        return any(p.failed(self.strict or strict) for p in self.parts)

    def to_json(self) -> dict[str, Any]:
        return {"level": self.level, "strict": self.strict, "passed": not self.failed(),
                "checked": [p.to_json() for p in self.parts]}


def run_hook(files: Iterable[str | os.PathLike[str]], level: Level, *, strict: bool = False,
             select: Iterable[str] = (), ignore: Iterable[str] = (), target: str | None = None) -> HookRun:
    """What `dflash2-ckpt hook config|verify FILES` runs: each checkpoint directory of FILES checked once."""
    found = check_dirs(checkpoint_dirs(files), level, select=select, ignore=ignore, target=target)
    return HookRun(level, strict, tuple(r for _, r in found))


def run_smoke_hook(dirs: Iterable[Path], extra_args: Iterable[str] = ()) -> int:
    """`dflash2-ckpt smoke DIR` per directory, in a child process (torch stays out of this one); worst exit code."""
    worst = 0
    for d in dirs:
        rc = subprocess.call([sys.executable, "-m", "dflash2_ckpt", "smoke", str(d), *extra_args])
        worst = max(worst, rc)
    return worst
