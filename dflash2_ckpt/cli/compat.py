"""`dflash2-ckpt compat PATH`: a verdict per engine profile (or the named ones) and the serve command.

Exit codes: 0 every named engine loads it (without --engine: some engine loads it), 1 otherwise,
2 an engine name or version no profile covers, 3 the checkpoint could not be read.
"""
from __future__ import annotations

import json

import click
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from ..compat import CompatReport
from . import EXIT_FINDINGS, EXIT_OK, _engines, _stdout, guarded, open_source   # cli/__init__ imports us last

_STYLE = {"loads": "green", "degraded": "yellow", "fails": "bold red", "needs-conversion": "cyan",
          "unsupported": "dim"}


def render_text(r: CompatReport, console: Console) -> None:
    console.print(f"[bold]{escape(r.path)}[/bold]: {r.dialect or '?'} dialect, {r.version or 'not DFlash'}")
    t = Table(show_header=True, header_style="bold")
    for col in ("engine", "versions", "verdict", "why"):
        t.add_column(col, overflow="fold")
    for v in r.verdicts:
        shown = [x for x in v.reasons if x.severity != "info" or v.verdict != "loads"]
        why = "\n".join(f"{x.code} {x.message}" for x in shown)
        t.add_row(v.profile.label, v.profile.versions.label, f"[{_STYLE[v.verdict]}]{v.verdict}[/]", escape(why))
    console.print(t)
    for v in r.verdicts:
        if v.serve and v.verdict in ("loads", "degraded"):
            console.print(f"[bold]{escape(v.profile.title)}[/bold]: {escape(v.serve)}", soft_wrap=True)


@click.command("compat")
@click.argument("path")
@click.option("--engine", "engines", multiple=True, metavar="NAME[@VERSION]", callback=lambda c, p, v: _engines(v),
              help="Judge only these engines, e.g. vllm@0.29.0, sglang, llama.cpp@b10700 (repeatable).")
@click.option("--target", default=None, help="Target model (path or repo id) written into the serve commands.")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@guarded
def compat_command(path: str, engines: tuple[str, ...], target: str | None, fmt: str) -> int:
    """Will this drafter load in the engine you run, and with which command?"""
    from ..compat import compat
    report = compat(open_source(path), engines=engines, target=target)
    if fmt == "json":
        click.echo(json.dumps(report.to_json(), indent=2, default=str))
    else:
        render_text(report, _stdout())
    return EXIT_FINDINGS if report.failed() else EXIT_OK
