"""Project settings from `[tool.dflash2-ckpt]` in pyproject.toml, as ruff reads `[tool.ruff]`.

The file is the first pyproject.toml with a `[tool.dflash2-ckpt]` table found from the working
directory upward (or the file named by --config; a file that is not a pyproject.toml may hold the keys
at its top level). Keys: select, ignore (code lists), strict (bool), engines (NAME[@VERSION] list),
target (path relative to the file's folder, or repo id), and `per-path`, a table of globs -> the same
keys, matched against each checked checkpoint's path relative to the file's directory (or as given, for a
Hub id). A matching entry's select / ignore EXTEND the table's (ruff's extend-per-file-ignores); its other
keys replace the table's, later globs winning. The command line replaces select, strict, engines, target
and the table's ignore; the per-path ignores still apply (as ruff's per-file-ignores do under --ignore).
Every value keeps where it came from, for `dflash2-ckpt config`.
"""

from __future__ import annotations

import fnmatch
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from ..errors import UsageError
from ..findings import Verdict, validate_selectors

TABLE = "tool.dflash2-ckpt"
# key -> (kind, default)
KEYS: dict[str, tuple[str, Any]] = {
    "select": ("codes", []),
    "ignore": ("codes", []),
    "strict": ("bool", False),
    "engines": ("list", []),
    "target": ("str", None),
}
DEFAULT = "default"
EXTENDED = ("select", "ignore")  # per-path entries add to these
CLI = "command line"


@dataclass
class Settings(Verdict):
    values: dict[str, Any] = field(default_factory=lambda: {k: d for k, (_, d) in KEYS.items()})
    origins: dict[str, str] = field(default_factory=lambda: dict.fromkeys(KEYS, DEFAULT))
    file: Path | None = None
    subject_path: str | None = None
    matched: list[str] = field(default_factory=list)  # the per-path globs that matched
    entries: list[str] = field(default_factory=list)  # every per-path glob of the file
    # select / ignore as the table (or command line) gave them, and the per-path additions with their origins
    base: dict[str, list[str]] = field(default_factory=lambda: {k: [] for k in EXTENDED})
    base_origin: dict[str, str] = field(default_factory=lambda: dict.fromkeys(EXTENDED, DEFAULT))
    extra: dict[str, list[tuple[list[str], str]]] = field(default_factory=lambda: {k: [] for k in EXTENDED})
    kind: ClassVar[str] = "config"  # a report kind: `dflash2-ckpt config` renders it in any format
    findings: tuple[Any, ...] = ()

    @property
    def subject(self) -> str:
        return str(self.file) if self.file else "(no settings file; defaults)"

    def failed(self, strict: bool = False) -> bool:
        return False  # a listing: always exit 0 once the file parsed

    def set(self, key: str, value: Any, origin: str) -> None:
        """The table's (or the command line's) value; select / ignore keep their per-path additions."""
        if key in EXTENDED:
            self.base[key], self.base_origin[key] = list(value), origin
            self._combine(key)
        else:
            self.values[key], self.origins[key] = value, origin

    def extend(self, key: str, value: list[str], origin: str) -> None:
        """A matching per-path entry's select / ignore, added to the table's."""
        self.extra[key].append((list(value), origin))
        self._combine(key)

    def _combine(self, key: str) -> None:
        value = list(self.base[key])
        origins = [self.base_origin[key]] if self.base[key] else []
        for codes, origin in self.extra[key]:
            value += [c for c in codes if c not in value]
            origins.append(origin)
        if key == "select" and not self.base[key]:
            value = []  # no select is every code already: an addition changes nothing
            origins = [self.base_origin[key]]
        self.values[key] = value
        self.origins[key] = " + ".join(origins) if origins else DEFAULT

    def command_line(self, given: dict[str, Any]) -> Settings:
        """The options given on the command line, over the file: select, strict, engines and target replace
        the file's; ignore replaces the table's, the matching per-path ignores still added."""
        for key, value in given.items():
            if value is None:
                continue
            if key == "select":
                self.extra["select"] = []
            self.set(key, value, CLI)
        return self

    def to_json(self) -> dict[str, Any]:
        return {
            "file": str(self.file) if self.file else None,
            "path": self.subject_path,
            "matched": list(self.matched),
            "per_path": list(self.entries),
            "settings": {k: {"value": self.values[k], "origin": self.origins[k]} for k in KEYS},
        }


def find_pyproject(start: Path) -> Path | None:
    """The nearest pyproject.toml with a [tool.dflash2-ckpt] table, from `start` upward."""
    for d in (start, *start.parents):
        candidate = d / "pyproject.toml"
        if candidate.is_file() and _table(_read(candidate), candidate, required=False) is not None:
            return candidate
    return None


def _read(path: Path) -> dict[str, Any]:
    # the TOML parser loads only when there is a file to read
    if sys.version_info >= (3, 11):
        import tomllib  # lazy: tomllib loads only on this path
    else:  # Python 3.10: the same parser, from PyPI
        import tomli as tomllib  # lazy: tomli loads only on this path
    try:
        with open(path, "rb") as f:
            doc: dict[str, Any] = tomllib.load(f)
        return doc
    except tomllib.TOMLDecodeError as e:
        raise UsageError(f"not valid TOML ({e})", path=str(path), hint="fix the file's syntax") from None
    except RecursionError:  # the parser recurses per nested array or inline table
        raise UsageError(
            "nests arrays or tables too deeply to read",
            path=str(path),
            hint="flatten the nesting; the settings are flat lists of strings",
        ) from None
    except OSError as e:
        raise UsageError(
            f"cannot read the settings file ({e.strerror})",
            path=str(path),
            hint="give an existing file with --config",
        ) from None


def _table(doc: dict[str, Any], path: Path, *, required: bool) -> dict[str, Any] | None:
    table = doc.get("tool", {}).get("dflash2-ckpt")
    if table is None and path.name != "pyproject.toml" and required:
        table = doc  # a dedicated file: the keys at its top level
    if table is not None and not isinstance(table, dict):
        raise UsageError(f"[{TABLE}] must be a table", path=str(path))
    return table


def _check(key: str, value: Any, where: str, path: Path) -> Any:
    if key not in KEYS:
        raise UsageError(
            f"unknown key {where}.{key}",
            path=str(path),
            hint=f"the keys are {', '.join([*KEYS, 'per-path'])}",
        )
    kind = KEYS[key][0]
    ok = {
        "bool": isinstance(value, bool),
        "str": isinstance(value, str),
        "list": isinstance(value, list) and all(isinstance(v, str) for v in value),
        "codes": isinstance(value, list) and all(isinstance(v, str) for v in value),
    }[kind]
    if not ok:
        want = {
            "bool": "true or false",
            "str": "a string",
            "list": "a list of strings",
            "codes": 'a list of codes, e.g. ["DF2", "DF401"]',
        }[kind]
        raise UsageError(f"{where}.{key} must be {want}", path=str(path))
    if kind == "codes":
        value = [v.strip().upper() for v in value]
        try:
            validate_selectors(value)
        except ValueError as e:
            raise UsageError(f"{where}.{key}: {e}", path=str(path)) from None
    return value


def _matches(glob: str, subject: str | None, base: Path) -> bool:
    if subject is None:
        return False
    candidates = [subject.rstrip("/")]
    if os.path.exists(subject):
        try:
            candidates.append(Path(subject).resolve().relative_to(base.resolve()).as_posix())
        except ValueError:
            pass
    # a glob naming a folder covers what is inside it (ruff's per-file-ignores treat directories alike)
    prefixes = {"/".join(c.split("/")[:n]) for c in candidates for n in range(1, c.count("/") + 2)}
    return any(fnmatch.fnmatchcase(c, glob.rstrip("/")) for c in prefixes)


@dataclass(frozen=True)
class Project:
    """A settings file read and checked once; `settings(subject)` resolves it for each checkpoint."""

    file: Path | None = None
    table: tuple[tuple[str, Any], ...] = ()
    per_path: tuple[tuple[str, dict[str, Any]], ...] = ()

    def settings(self, subject: str | None = None, given: dict[str, Any] | None = None) -> Settings:
        """Defaults < the table < its per-path entries matching `subject` < the command line (`given`)."""
        settings = Settings(subject_path=subject, file=self.file, entries=[g for g, _ in self.per_path])
        if self.file is None:
            return settings.command_line(given or {})
        for key, value in self.table:
            settings.set(key, value, f"{self.file} [{TABLE}]")
        for glob, entry in self.per_path:
            if not _matches(glob, subject, self.file.parent):
                continue
            settings.matched.append(glob)
            origin = f'{self.file} [{TABLE}.per-path."{glob}"]'
            for key, value in entry.items():
                (settings.extend if key in EXTENDED else settings.set)(key, value, origin)
        return settings.command_line(given or {})


def _target(value: Any, base: Path) -> Any:
    """A target path in the file is relative to the file's folder (as ruff reads paths); a Hub id stays."""
    if isinstance(value, str) and not os.path.isabs(value) and (base / value).exists():
        return str(base / value)
    return value


def load(config: str | os.PathLike[str] | None = None, cwd: Path | None = None) -> Project:
    """The settings file (--config, else the nearest pyproject.toml with the table), read and checked."""
    path = Path(config) if config is not None else find_pyproject((cwd or Path.cwd()).resolve())
    if path is None:
        return Project()
    table = _table(_read(path), path, required=config is not None)
    if table is None:
        raise UsageError(f"no [{TABLE}] table", path=str(path), hint=f"add [{TABLE}] with the settings")
    per_path = table.get("per-path", {})
    if not isinstance(per_path, dict) or not all(isinstance(v, dict) for v in per_path.values()):
        raise UsageError(
            f'{path}: {TABLE}.per-path must be a table of globs, e.g. "drafters/old/*" = '
            '{ ignore = ["DF401"] }',
            path=str(path),
        )

    def checked(entry: dict[str, Any], where: str) -> dict[str, Any]:
        out = {k: _check(k, v, where, path) for k, v in entry.items()}
        if "target" in out:
            out["target"] = _target(out["target"], path.parent)
        return out

    top = checked({k: v for k, v in table.items() if k != "per-path"}, TABLE)
    entries = tuple((glob, checked(entry, f'{TABLE}.per-path."{glob}"')) for glob, entry in per_path.items())
    return Project(path, tuple(top.items()), entries)


def resolve(
    config: str | os.PathLike[str] | None = None,
    subject: str | None = None,
    cwd: Path | None = None,
    given: dict[str, Any] | None = None,
) -> Settings:
    """The settings for one checkpoint (the command line's options in `given`, None where not given)."""
    return load(config, cwd).settings(subject, given)
