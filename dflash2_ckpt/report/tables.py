"""Table formats for reports that are a table rather than a list of findings (audit): Markdown and HTML.

A report kind offers them by having `to_markdown()` / `to_html()`; the rest get a usage error, since a
findings list has no honest table form here (use json, sarif or github for those).
"""
from __future__ import annotations

from typing import IO, Any

from ..errors import UsageError


def _table(report: Any, method: str, fmt: str) -> str:
    fn = getattr(report, method, None)
    if not callable(fn):
        raise UsageError(f"--format {fmt} is for table reports (audit); {getattr(report, 'kind', 'this')} "
                         "reports render as text, json, sarif or github")
    return str(fn())


def render_markdown(report: Any, stream: IO[str]) -> None:
    stream.write(_table(report, "to_markdown", "markdown"))


def render_html(report: Any, stream: IO[str]) -> None:
    stream.write(_table(report, "to_html", "html"))
