"""Text layout of an audit: the totals first, then one entry per drafter (which engines load it, and how
the others judge it), each within the terminal's width; `--verbose` adds every release and the findings.
The full table is the markdown and html formats'."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.text import Text

from .audit import text_lines
from .text import text_renderer


@text_renderer("audit")
def render_audit(report: Any, out: Console) -> None:
    for n, line in enumerate(text_lines(report, out.width, bool(getattr(out, "verbose", False)))):
        out.print(Text(line, style="bold" if n == 0 else ""), soft_wrap=True)
