"""Text layout of a `compat` report: a verdict per engine release, its reasons, and the serve commands."""
from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from .text import text_renderer

_VERDICT_STYLE = {"loads": "green", "degraded": "yellow", "fails": "bold red", "needs-conversion": "cyan",
                  "unsupported": "dim"}


@text_renderer("compat")
def render_compat(r: Any, out: Console) -> None:
    family = f", {escape(r.family['label'])}" if getattr(r, "family", None) else ""
    out.print(f"[bold]{escape(r.path)}[/bold]: {r.dialect or '?'} dialect, {r.version or 'not DFlash'}{family}")
    t = Table(show_header=True, header_style="bold")
    for col in ("engine", "versions", "verdict", "why"):
        t.add_column(col, overflow="fold")
    for v in r.verdicts:
        shown = [x for x in v.reasons if x.severity != "info" or v.verdict != "loads"]
        why = "\n".join(f"{x.code} {x.message}" for x in shown)
        t.add_row(v.profile.label, v.profile.versions.label, f"[{_VERDICT_STYLE[v.verdict]}]{v.verdict}[/]",
                  escape(why))
    out.print(t)
    for v in r.verdicts:
        if v.serve and v.verdict in ("loads", "degraded"):
            out.print(f"[bold]{escape(v.profile.title)}[/bold]: {escape(v.serve)}", soft_wrap=True)
