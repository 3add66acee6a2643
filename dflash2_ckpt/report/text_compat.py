"""Text layout of a `compat` report: a verdict per engine release, its reasons, and the serve commands."""
from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.table import Table

from .safe_markup import value
from .text import text_renderer

_VERDICT_STYLE = {"loads": "green", "degraded": "yellow", "fails": "bold red", "needs-conversion": "cyan",
                  "unsupported": "dim", "not-validated": "magenta"}


@text_renderer("compat")
def render_compat(r: Any, out: Console) -> None:
    out.print(f"[bold]{value(r.path)}[/bold]: {value(r.dialect or '?')} dialect, "
              f"{value(r.version or 'not DFlash')}")
    t = Table(show_header=True, header_style="bold")
    for col in ("engine", "versions", "verdict", "why"):
        t.add_column(col, overflow="fold")
    for v in r.verdicts:
        shown = [x for x in v.reasons if x.severity != "info" or v.verdict != "loads"]
        why = "\n".join(value(f"{x.code} {x.message}") for x in shown)
        t.add_row(v.profile.label, v.profile.versions.label, f"[{_VERDICT_STYLE[v.verdict]}]{v.verdict}[/]",
                  why)
    out.print(t)
    for v in r.verdicts:
        if v.serve and v.verdict in ("loads", "degraded"):
            out.print(f"[bold]{value(v.profile.title)}[/bold]: {value(v.serve)}", soft_wrap=True)
    loads = sum(v.verdict == "loads" for v in r.verdicts)
    scope = "every engine named" if r.named else "at least one engine"
    word = "[red]FAILED[/red]" if r.failed() else "[green]passed[/green]"
    out.print(f"{word}: {loads} of {len(r.verdicts)} engine release(s) load it (passes when {scope} "
              "loads it)")
