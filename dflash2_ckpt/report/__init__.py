"""Reporters chosen by name: every report kind renders as `text`, `json`, `sarif` or `github`.

A report kind (verify, inspect, convert, smoke, push, and whatever comes next) is a plain object with
  kind: str                 a name, e.g. "verify"; picks the text layout (report.text.text_renderer)
  subject: str              what was checked (a directory, a Hub label)
  findings: Sequence[Finding]
  to_json() -> dict         the whole report as one JSON document
A new kind plugs in by having those four and, for a layout of its own, registering a text renderer
with `@text_renderer("compat")` in a module of this package named in report/text.py's KIND_MODULES
(imported when a report of that kind is rendered); without one it gets the generic layout (subject,
findings table, verdict). json / sarif / github need nothing more. Rendering only: no checks, no exit codes here.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import IO, Any, Protocol

from ..findings import Finding


class Reportable(Protocol):
    @property
    def kind(self) -> str: ...

    @property
    def subject(self) -> str: ...

    @property
    def findings(self) -> Sequence[Finding]: ...

    def failed(self, strict: bool = False) -> bool: ...  # findings.Verdict gives it to every kind

    def to_json(self) -> dict[str, Any]: ...


# the formats' modules load when a report is rendered in them, and each kind's text layout when a report
# of that kind is (report/text.py): a header verify does not import the audit, accept or SARIF code
def _text(report: Any, stream: IO[str], verbose: bool = False) -> None:
    if getattr(report, "kind", "") == "hook":  # plain lines: a pre-commit run needs no rich (text_hook.py)
        from .text_hook import render_plain  # lazy: report.text_hook loads only on this path

        render_plain(report, stream)
        return
    from . import text  # lazy: report.text loads only on this path

    text.render(report, stream, verbose=verbose)


def _lazy(module: str, name: str) -> Callable[..., None]:
    def run(*args: Any) -> None:
        getattr(importlib.import_module(f".{module}", __name__), name)(*args)

    run.__name__ = f"{module}.{name}"
    return run


Renderer = Callable[[Any, IO[str]], None]
FORMATS: dict[str, Renderer] = {
    "text": _text,
    "json": _lazy("json_out", "render"),
    "sarif": _lazy("sarif", "render"),
    "github": _lazy("github", "render"),
}
# for table reports only (audit): chosen by name like the others, never offered by the finding commands
TABLE_FORMATS: dict[str, Renderer] = {
    "markdown": _lazy("tables", "render_markdown"),
    "html": _lazy("tables", "render_html"),
}
ErrorRenderer = Callable[[Mapping[str, Any], IO[str], IO[str]], None]
ERROR_FORMATS: dict[str, ErrorRenderer] = {
    f: _lazy(m, "render_error")
    for f, m in (("text", "text"), ("json", "json_out"), ("sarif", "sarif"), ("github", "github"))
}


def __getattr__(name: str) -> object:
    if name in ("render_findings", "render_summary", "render_text"):  # library API, from report/text.py
        from . import text  # lazy: report.text loads only on this path

        return getattr(text, name)
    if name in ("github", "json_out", "sarif", "tables", "text"):
        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def render(
    report: Reportable, fmt: str = "text", stream: IO[str] | None = None, *, verbose: bool = False
) -> None:
    """Write `report` to `stream` (stdout by default) in the format named `fmt`. `verbose`: the text layout's
    full form (every release, the citations); the other formats always carry everything."""
    out = stream if stream is not None else sys.stdout
    if fmt == "text":
        _text(report, out, verbose)
        return
    {**FORMATS, **TABLE_FORMATS}[fmt](report, out)


def render_error(
    error: Mapping[str, Any],
    fmt: str = "text",
    stream: IO[str] | None = None,
    err_stream: IO[str] | None = None,
) -> None:
    """An error document {type, message, hint, ...}: machine formats on `stream`, text on `err_stream`."""
    ERROR_FORMATS.get(fmt, ERROR_FORMATS["text"])(
        error,
        stream if stream is not None else sys.stdout,
        err_stream if err_stream is not None else sys.stderr,
    )


def render_json(report: Reportable) -> str:
    from . import json_out  # lazy: report.json_out loads only on this path

    return json_out.dumps(report)
