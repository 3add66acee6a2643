"""Text layout of an audit: the compatibility table, one row per drafter and a column per engine."""
from __future__ import annotations

from typing import Any

from rich.console import Console

from .text import text_renderer


@text_renderer("audit")
def render_audit(report: Any, out: Console) -> None:
    from .audit import to_rich
    out.print(to_rich(report))
