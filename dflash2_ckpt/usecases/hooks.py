"""What the pre-commit hooks run: file names in, one verification per checkpoint directory out.

pre-commit passes the changed files that match a hook's pattern, possibly many per checkpoint (a
config, an index, a dozen shards); each directory is checked once. Neither level imports torch, so
the hooks stay light; the smoke hook shells out to `dflash2-ckpt smoke`, which needs the [smoke] extra.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, Literal

from ..checkpoint import CONFIG, INDEX
from ..findings import Verdict
from ..formats.detect import detect
from ..formats.parse import load_config
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
        self.root = self._inner.root

    def list_files(self) -> list[str]:
        return [CONFIG] if CONFIG in self._inner.list_files() else []

    def file_size(self, name: str) -> int:
        return self._inner.file_size(name)

    def read_range(self, name: str, start: int, length: int) -> bytes:
        return self._inner.read_range(name, start, length)

    def local_path(self, name: str) -> Path | None:
        return self._inner.local_path(name)


def not_a_drafter(d: Path) -> str | None:
    """Why the config.json of `d` is no drafter's (a target's, a tokenizer's, any model's), or None.

    A repository that publishes a drafter often holds its target's or its tokenizer's config.json too; the
    hook's file pattern matches them all, and only drafter configs are judged. A config that names another
    drafter (DSpark, EAGLE-3) is still judged, so DF304 says what it is."""
    if d.suffix == ".gguf" or not (d / CONFIG).is_file():
        return None
    try:
        raw = (d / CONFIG).read_bytes()[: 64 << 20]
    except OSError:
        return None
    cfg, _ = load_config(raw)
    if cfg is None:
        return None  # unreadable JSON is a finding (DF100), not a reason to skip
    det = detect(cfg)
    if det.version is not None or det.other is not None:
        return None
    archs = cfg.get("architectures")
    what = ", ".join(a for a in archs if isinstance(a, str)) if isinstance(archs, list) else None
    return (
        f"not a drafter config ({what or cfg.get('model_type') or 'no DFlash architecture or keys'}); skipped"
    )


@dataclass(frozen=True)
class Options:
    """How one checkpoint directory is judged (the project's settings resolved for it)."""

    select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    target: str | None = None
    strict: bool = False
    engines: tuple[str, ...] = ()


def check_dirs(
    dirs: Iterable[Path], level: Level, options: Callable[[Path], Options] = lambda d: Options()
) -> list[tuple[Path, Report]]:
    """One Report per drafter directory, judged by `options(DIR)`. At config level the file checks (DF6xx)
    are off: no weights are looked at. Directories whose config.json is no drafter's are left to `skipped`."""
    out = []
    for d in dirs:
        if not_a_drafter(d) is not None:
            continue
        o = options(d)
        if level == "config":
            report = verify(
                ConfigOnlySource(d),
                target=o.target,
                select=o.select,
                ignore=[*o.ignore, "DF6"],
                engines=o.engines,
            )
        else:
            report = verify(
                LocalSource(d), target=o.target, select=o.select, ignore=o.ignore, engines=o.engines
            )
        out.append((d, report))
    return out


@dataclass(frozen=True)
class HookRun(Verdict):
    """One hook run: a verify report per checkpoint directory (its `parts`, rendered one by one)."""

    level: Level
    strict: bool
    parts: tuple[Report, ...]
    skipped: tuple[tuple[str, str], ...] = ()  # (directory, why): configs that are no drafter's
    stricts: tuple[bool, ...] = ()  # per part: its own settings' strict
    kind: ClassVar[str] = "hook"

    @property
    def subject(self) -> str:
        return f"pre-commit {self.level} checks"

    @property
    def findings(self) -> tuple[Any, ...]:
        return tuple(f for p in self.parts for f in p.findings)

    def part_strict(self, n: int) -> bool:
        """The run's strict, or this directory's own settings'."""
        return self.strict or (self.stricts[n] if n < len(self.stricts) else False)

    def part_failed(self, n: int, strict: bool = False) -> bool:
        return bool(self.parts[n].failed(self.part_strict(n) or strict))

    def failed(self, strict: bool = False) -> bool:
        return any(self.part_failed(n, strict) for n in range(len(self.parts)))

    def to_json(self) -> dict[str, Any]:
        stricts = [self.part_strict(n) for n in range(len(self.parts))]
        return {
            "level": self.level,
            "strict": bool(stricts) and all(stricts),
            "passed": not self.failed(),
            "checked": [{**p.to_json(), "strict": s} for p, s in zip(self.parts, stricts)],
            "skipped": [{"path": d, "reason": why} for d, why in self.skipped],
        }


def run_hook(
    files: Iterable[str | os.PathLike[str]],
    level: Level,
    *,
    strict: bool = False,
    select: Iterable[str] = (),
    ignore: Iterable[str] = (),
    target: str | None = None,
    options: Callable[[Path], Options] | None = None,
) -> HookRun:
    """What `dflash2-ckpt hook config|verify FILES` runs: each checkpoint directory of FILES checked once,
    by `options(DIR)` (the project's settings for it), else by the same select / ignore / target for all."""
    dirs = checkpoint_dirs(files)
    skipped = tuple((str(d), why) for d in dirs if (why := not_a_drafter(d)) is not None)
    same = Options(tuple(select), tuple(ignore), target, strict)
    each = {d: (options(d) if options else same) for d in dirs}
    found = check_dirs(dirs, level, each.__getitem__)
    return HookRun(
        level, strict, tuple(r for _, r in found), skipped, tuple(each[d].strict for d, _ in found)
    )


def run_smoke_hook(dirs: Iterable[Path], extra_args: Iterable[str] = ()) -> int:
    """`dflash2-ckpt smoke DIR` per directory, in a child process (torch stays out of this one); worst exit code."""
    import subprocess  # only the smoke hook starts processes

    worst = 0
    for d in dirs:
        rc = subprocess.call([sys.executable, "-m", "dflash2_ckpt", "smoke", str(d), *extra_args])
        worst = max(worst, rc)
    return worst
