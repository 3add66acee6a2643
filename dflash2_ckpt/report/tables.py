"""Table formats for reports that are a table rather than a list of findings (audit): Markdown and HTML.

A report kind has them when it is listed in TABLES; the rest get a usage error, since a findings list
has no honest table form here (use json, sarif or github for those).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import IO, Any

from ..errors import UsageError
from . import accept_tables, audit

TABLES: dict[str, dict[str, Callable[[Any], str]]] = {
    "audit": {"markdown": audit.to_markdown, "html": audit.to_html},
    "accept": {"markdown": accept_tables.markdown, "html": accept_tables.page},  # a card's τ table
}


def _table(report: Any, fmt: str) -> str:
    kind = getattr(report, "kind", "this")
    fn = TABLES.get(kind, {}).get(fmt)
    if fn is None:
        raise UsageError(
            f"--format {fmt} is for table reports (audit, accept); {kind} "
            "reports render as text, json, sarif or github"
        )
    return fn(report)


def render_markdown(report: Any, stream: IO[str]) -> None:
    stream.write(_table(report, "markdown"))


def render_html(report: Any, stream: IO[str]) -> None:
    stream.write(_table(report, "html"))
