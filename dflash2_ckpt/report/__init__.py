"""Reporters chosen by name: every report kind renders as `text`, `json`, `sarif` or `github`.

A report kind (verify, inspect, convert, smoke, push, and whatever comes next) is a plain object with
  kind: str                 a name, e.g. "verify"; picks the text layout (report.text.text_renderer)
  subject: str              what was checked (a directory, a Hub label)
  findings: Sequence[Finding]
  to_json() -> dict         the whole report as one JSON document
A new kind plugs in by having those four and, for a layout of its own, registering a text renderer
with `@text_renderer("compat")` in a module that this package imports (list it in _KIND_MODULES);
without one it gets the generic layout (subject, findings table, verdict). json / sarif / github
need nothing more. Rendering only: no checks, no exit codes here.
"""
from __future__ import annotations

import importlib
import sys
from typing import IO, Any, Callable, Mapping, Protocol, Sequence

from ..findings import Finding


class Reportable(Protocol):
    @property
    def kind(self) -> str: ...

    @property
    def subject(self) -> str: ...

    @property
    def findings(self) -> Sequence[Finding]: ...

    def failed(self, strict: bool = False) -> bool: ...      # findings.Verdict gives it to every kind

    def to_json(self) -> dict[str, Any]: ...


from . import github, json_out, sarif, tables, text  # noqa: E402  (the protocol above is what they render)
from .text import render_findings, render_summary, render_text  # noqa: E402,F401  (library API)

# kinds whose text layout lives in its own module; importing one registers it
_KIND_MODULES = ("text_convert", "text_smoke", "text_compat", "text_gguf", "text_diff", "text_audit", "text_accept",
                "text_config", "text_hook")
for _m in _KIND_MODULES:
    importlib.import_module(f".{_m}", __name__)

Renderer = Callable[[Any, IO[str]], None]
FORMATS: dict[str, Renderer] = {"text": text.render, "json": json_out.render, "sarif": sarif.render,
                                "github": github.render}
# for table reports only (audit): chosen by name like the others, never offered by the finding commands
TABLE_FORMATS: dict[str, Renderer] = {"markdown": tables.render_markdown, "html": tables.render_html}
ErrorRenderer = Callable[[Mapping[str, Any], IO[str], IO[str]], None]
ERROR_FORMATS: dict[str, ErrorRenderer] = {"text": text.render_error, "json": json_out.render_error,
                                           "sarif": sarif.render_error, "github": github.render_error}


def render(report: Reportable, fmt: str = "text", stream: IO[str] | None = None) -> None:
    """Write `report` to `stream` (stdout by default) in the format named `fmt`."""
    {**FORMATS, **TABLE_FORMATS}[fmt](report, stream if stream is not None else sys.stdout)


def render_error(error: Mapping[str, Any], fmt: str = "text", stream: IO[str] | None = None,
                 err_stream: IO[str] | None = None) -> None:
    """An error document {type, message, hint, ...}: machine formats on `stream`, text on `err_stream`."""
    ERROR_FORMATS.get(fmt, text.render_error)(error, stream if stream is not None else sys.stdout,
                       err_stream if err_stream is not None else sys.stderr)


def render_json(report: Reportable) -> str:
    return json_out.dumps(report)
