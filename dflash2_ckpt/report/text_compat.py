"""Text layout of a `compat` report: a verdict per engine release, its reasons, and the serve commands."""
from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from .text import text_renderer

_VERDICT_STYLE = {"loads": "green", "degraded": "yellow", "fails": "bold red", "needs-conversion": "cyan",
                  "unsupported": "dim"}


def _versions(v: Any) -> str:
    """The releases whose code was read, not the range the profile is applied to: `0.33.0-0.34.0 checked`;
    with the version named, `9.0.0 (0.33.0 checked)`."""
    checked = v.checked
    shown = checked.label if checked is not None else v.profile.versions.label
    return f"{v.asked} ({shown})" if v.asked else shown


def checked_edges(verdicts: Any) -> str:
    """Each engine's checked edge, once: versions outside it are judged as the nearest checked release."""
    from ..engines.checked import engine_span
    from ..engines.registry import by_engine
    parts = []
    for engine, label in dict.fromkeys((v.profile.engine, v.profile.label) for v in verdicts):
        whole = engine_span(by_engine(engine))
        if whole is not None:
            parts.append(f"{label} {whole.first}" + (f"-{whole.last}" if whole.last != whole.first else ""))
    return ("releases checked: " + ", ".join(parts) + ". A version outside is judged as the nearest checked "
            "release; --engine NAME@VERSION says so (DF816)")


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
        t.add_row(v.profile.label, escape(_versions(v)), f"[{_VERDICT_STYLE[v.verdict]}]{v.verdict}[/]",
                  escape(why))
    out.print(t)
    if not r.named:
        out.print(escape(checked_edges(r.verdicts)), soft_wrap=False)
    for v in r.verdicts:
        if v.serve and v.verdict in ("loads", "degraded"):
            out.print(f"[bold]{escape(v.profile.title)}[/bold]: {escape(v.serve)}", soft_wrap=True)
