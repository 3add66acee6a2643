"""Where a finding is: the file it names (config.json for a config field) and the line of that field.

SARIF and GitHub annotations point at a file and line. A finding with a field path ("dflash_config.
block_size") is placed on the line where that key is written in config.json; others on their file.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..findings import Finding

_WS = re.compile(r"[ \t\n\r]*")
_DECODER = json.JSONDecoder()
scanstring = json.decoder.scanstring  # type: ignore[attr-defined]  # public since 2.6, missing in typeshed
_MAX_CONFIG = 16 * 1024 * 1024


def field_keys(field: str) -> list[str]:
    """'a.b[2].c' -> ['a', 'b', 'c']: the object keys of a field path (list indices stay on the list's line)."""
    return [k for k in re.sub(r"\[[^\]]*\]", "", field).split(".") if k]


def key_span(text: str, keys: Iterable[str]) -> tuple[int, int] | None:
    """(start, end) offsets of the deepest key of `keys` found by walking the JSON objects of `text`, as
    written (its quotes included); None if not even the first."""
    pos: tuple[int, int] | None = None
    i = 0
    try:
        for key in keys:
            i = _WS.match(text, i).end()  # type: ignore[union-attr]
            if text[i] != "{":
                return pos
            i += 1
            while True:
                i = _WS.match(text, i).end()  # type: ignore[union-attr]
                if text[i] == "}":
                    return pos
                if text[i] == ",":
                    i += 1
                    continue
                start = i
                name, i = scanstring(text, i + 1)
                end = i
                i = _WS.match(text, i).end()  # type: ignore[union-attr]
                i = _WS.match(text, i + 1).end()  # type: ignore[union-attr]  # past ':'
                if name == key:
                    pos = (start, end)
                    break
                _, i = _DECODER.raw_decode(text, i)  # skip this value whole
    except (ValueError, IndexError):
        return pos
    return pos


def key_line(text: str, field: str) -> int | None:
    region = key_region(text, field)
    return None if region is None else region[0]


def _column(text: str, off: int) -> int:
    """1-based column of `off` in UTF-16 code units (SARIF's default columnKind, what editors count)."""
    line_start = text.rfind("\n", 0, off) + 1
    return len(text[line_start:off].encode("utf-16-le", "surrogatepass")) // 2 + 1


def key_region(text: str, field: str) -> tuple[int, int, int] | None:
    """(line, startColumn, endColumn) of the field's key as written ("key" with its quotes; endColumn is
    the column after it), or None when not even its first key is in `text`."""
    span = key_span(text, field_keys(field))
    if span is None:
        return None
    start, end = span
    return text.count("\n", 0, start) + 1, _column(text, start), _column(text, end)


@dataclass(frozen=True)
class Location:
    uri: str  # a relative path where the subject is under the working directory
    line: int | None
    column: int | None = None  # where the key starts on `line`, and the column after it (UTF-16, 1-based)
    end_column: int | None = None


def _local_dir(subject: str) -> Path | None:
    p = Path(subject)
    if p.is_file():  # a GGUF drafter is one file: its findings sit on it
        return p.parent
    return p if p.is_dir() else None


def _uri(root: Path | None, file: str, subject: str = "") -> str:
    if root is None:  # a Hub repo (org/name[/subfolder]): the file inside it, so drafters stay apart
        return f"{subject.rstrip('/')}/{file}" if subject else file
    full = (root / file).absolute()
    try:
        return full.relative_to(Path.cwd()).as_posix()
    except ValueError:
        return full.as_posix()


def parts(report: Any) -> tuple[Any, ...]:
    """A report made of one report per checkpoint (`parts`, e.g. a hook run) is placed part by part."""
    return tuple(getattr(report, "parts", None) or (report,))


def locate_all(report: Any) -> list[tuple[Finding, Location]]:
    return [x for p in parts(report) for x in locate(str(p.subject), p.findings)]


def locate(subject: str, findings: Iterable[Finding]) -> list[tuple[Finding, Location]]:
    root = _local_dir(subject)
    config_text: str | None = None
    if (
        root is not None
        and (root / "config.json").is_file()
        and (root / "config.json").stat().st_size < _MAX_CONFIG
    ):
        try:
            config_text = (root / "config.json").read_text(encoding="utf-8", errors="replace")
        except OSError:
            config_text = None
    out = []
    default = Path(subject).name if Path(subject).is_file() else "config.json"
    for f in findings:
        file = f.file or default
        region = (
            key_region(config_text, f.field) if (f.field and file == "config.json" and config_text) else None
        )
        out.append((f, Location(_uri(root, file, subject), *(region or (None,)))))
    return out


@dataclass(frozen=True)
class Refusal:
    """An error document that carries findings (a refused conversion), seen as a report of them."""

    subject: str
    findings: tuple[Finding, ...]


def refusal(error: Mapping[str, Any]) -> Refusal | None:
    found = error.get("findings")
    if not found:
        return None
    return Refusal(
        str(error.get("path") or ""),
        tuple(
            Finding(
                f["code"],
                f["message"],
                field=f.get("field"),
                tensor=f.get("tensor"),
                file=f.get("file"),
                severity=f.get("severity"),
            )
            for f in found
        ),
    )
