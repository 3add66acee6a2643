"""`dflash2-ckpt diff DERIVED --reference SRC`: a derived checkpoint against its source, tensor by tensor."""
from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.markup import escape
from rich.progress import Progress
from rich.table import Table

from . import EXIT_CANNOT_RUN, EXIT_FINDINGS, EXIT_OK, guarded, open_source

_STYLE = {"equal": "green", "quantization-noise": "cyan", "different": "bold red", "missing": "bold red",
          "extra": "yellow"}


def _render_text(result: Any, console: Console, show_all: bool) -> None:
    table = Table(show_header=True, header_style="bold")
    for col in ("tensor", "verdict", "scheme", "cosine", "max abs err", "rel RMS", "predicted"):
        table.add_column(col, overflow="fold")
    for f in result.figures:
        if f.verdict == "equal" and not show_all:
            continue
        num = f.verdict not in ("missing", "extra")
        table.add_row(escape(f.name), f"[{_STYLE[f.verdict]}]{f.verdict}[/]", escape(f.scheme or "-"),
                      f"{f.cosine:.6f}" if num else "", f"{f.max_abs:.3g}" if num else "",
                      f"{f.rel_rms:.3g}" if num else "", f"{f.predicted_rel_rms:.3g}" if num else "")
    if table.rows:
        console.print(table)
    for f in result.figures:
        if f.reason:
            console.print(f"[bold red]{escape(f.name)}[/]: {escape(f.reason)}")
    counts = ", ".join(f"{v} {k}" for k, v in sorted(result.counts.items()))
    verdict = "[red]FAILED[/red]" if result.failed() else "[green]passed[/green]"
    console.print(f"{verdict}: {escape(result.derived)} vs {escape(result.reference)}: {counts} "
                  f"({result.seconds:.2f} s)")


@click.command("diff")
@click.argument("derived")
@click.option("--reference", "-r", required=True, help="The source checkpoint (local path or Hub repo id).")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@click.option("--receipt", type=click.Path(dir_okay=False, writable=True), default=None,
              help="Write a JSON receipt: sha256 of every file on both sides and the per-tensor figures.")
@click.option("--all", "show_all", is_flag=True, help="List equal tensors too (text format).")
@guarded
def diff_command(derived: str, reference: str, fmt: str, receipt: str | None, show_all: bool) -> int:
    """Compare every tensor of DERIVED (quantized or re-exported) with the reference it was made from:
    equal, quantization-noise, different (random, zeroed, transposed, swapped), missing or extra."""
    try:
        from ..diff import diff
    except ImportError as e:
        click.echo(f"error: diff needs torch and compressed-tensors ({e.name} is missing)", err=True)
        click.echo('  hint: pip install "dflash2-ckpt[diff]"', err=True)
        return EXIT_CANNOT_RUN
    d, r = open_source(derived), open_source(reference)
    err = Console(stderr=True)
    if err.is_terminal:
        with Progress(console=err, transient=True) as bar:
            task = bar.add_task("diff", total=None)
            result = diff(d, r, progress=lambda i, n, name: bar.update(task, completed=i, total=n,
                                                                      description=escape(name[-40:])))
    else:
        result = diff(d, r)
    if receipt:
        Path(receipt).write_text(json.dumps(result.receipt(), indent=2) + "\n")
    if fmt == "json":
        click.echo(json.dumps({**result.report().to_json(), "passed": not result.failed()}, indent=2, default=str))
    else:
        _render_text(result, Console(highlight=False, soft_wrap=True,
                                     width=None if sys.stdout.isatty() else 160), show_all)
    return EXIT_FINDINGS if result.failed() else EXIT_OK
