"""`dflash2-ckpt convert`: a thin shell over convert(); renders the report and picks the exit code.

Exit codes: 0 converted (or planned, with --dry-run); 1 refused (the conversion cannot be exact, DST
exists without --force, or the output failed verification); 3 could not run (unreadable source or
target, write failure). Refusals print the reason and the next step.
"""
from __future__ import annotations

import functools
import json
import signal
import sys
from typing import Any, Callable

import click
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from ..errors import ConversionError, UsageError
from ..convert.report import ConversionReport


def _short(value: Any, width: int = 60) -> str:
    s = json.dumps(value, default=str)
    return s if len(s) <= width else s[:width - 3] + "..."


def _level_move(c: Any) -> bool:
    tl = "transformer_layer_config."
    return c.action == "moved" and bool(c.src and c.dst) and (
        (c.src.startswith(tl) and c.dst == c.src[len(tl):]) or (c.dst.startswith(tl) and c.src == c.dst[len(tl):]))


def render_text(r: ConversionReport, console: Console) -> None:
    head = "plan (dry run, nothing written)" if r.dry_run else "converted"
    console.print(f"[bold]{head}[/]: {r.src} ({r.from_dialect} {r.version}) -> {r.dst} ({r.to})")
    table = Table(title="config keys", show_header=True, header_style="bold")
    for col in ("action", "from", "to", "value", "reason"):
        table.add_column(col, overflow="fold")
    level = [c for c in r.config_changes if _level_move(c)]
    if level:
        keys = ", ".join((c.dst or "").split(".")[-1] for c in level)
        src, dst = ("transformer_layer_config.*", "*") if r.to == "nested" else ("*", "transformer_layer_config.*")
        table.add_row("moved", src, dst, f"{len(level)} keys: {keys}", "the transformer config changes level")
    for c in r.config_changes:
        if _level_move(c):
            continue
        value = f"{_short(c.old)} -> {_short(c.value)}" if c.action == "changed" else _short(c.value)
        table.add_row(c.action, c.src or "", c.dst or "", value, c.reason)
    console.print(table)
    moved = [t for t in r.tensors if t.action != "copy"]
    if moved:
        tt = Table(title="tensors renamed or dropped", show_header=True, header_style="bold")
        for col in ("action", "tensor", "to", "bytes", "reason"):
            tt.add_column(col, overflow="fold")
        for t in moved:
            tt.add_row(t.action, t.name, t.dst_name or "", f"{t.nbytes:,}", t.reason)
        console.print(tt)
    c = r.counts()
    console.print(f"tensors: {c['copy']} copied bit for bit, {c['rename']} renamed, {c['drop']} dropped; "
                  f"{r.bytes_copied:,} B written, {r.bytes_dropped:,} B dropped")
    for name, n, size in r.shards:
        console.print(f"  {name}: {n} tensors, {size:,} B")
    for f in r.files_copied:
        console.print(f"  copied {f}")
    for f, why in r.files_skipped:
        console.print(f"  skipped {f}: {why}")
    for note in (*r.notes, *r.cleaned):
        console.print(f"note: {note}")
    if r.dry_run and r.extra.get("dst_exists"):
        console.print(f"[yellow]{r.dst} exists; a real run needs --force[/]")
    if r.written:
        console.print(f"[green]verified[/]: {r.tensors_verified} tensors read back and hash-compared with the "
                      f"source; verify: {sum(f.severity == 'error' for f in r.verify_findings)} error(s) "
                      f"({r.seconds:.2f} s)")


def guarded(fn: Callable[..., int]) -> Callable[..., None]:
    """cli.guarded, looked up at call time: cli.py registers this command, so importing cli here at import
    time would be circular (and break `python -m dflash2_ckpt.cli`)."""
    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> None:
        from . import guarded as cli_guarded
        cli_guarded(fn)(*args, **kwargs)
    return wrapper


@click.command("convert")
@click.argument("src")
@click.option("-o", "--output", "dst", required=True, help="Destination directory (written atomically).")
@click.option("--to", "to", type=click.Choice(["nested", "flat"]), required=True, help="Destination dialect.")
@click.option("--target", type=click.Path(), default=None,
              help="Target model directory (config.json): num_target_layers when going nested, the verifier "
                   "when going flat; also checks that the drafter fits it.")
@click.option("--verifier-name", default=None, help="Verifier repo id written in speculators_config (flat).")
@click.option("--verifier-arch", "verifier_archs", multiple=True,
              help="Verifier architecture class written in speculators_config (flat), when --target is not given.")
@click.option("--dry-run", is_flag=True, help="Print the config diff and the tensor plan; write nothing.")
@click.option("--force", is_flag=True, help="Replace an existing DST, only after the new one verified.")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@guarded
def convert_command(src: str, dst: str, to: str, target: str | None, verifier_name: str | None,
                    verifier_archs: tuple[str, ...], dry_run: bool, force: bool, fmt: str) -> int:
    """Convert a DFlash / DFlash2 checkpoint between the nested and flat (speculators) dialects, exactly."""
    from . import EXIT_FINDINGS, EXIT_OK, EXIT_USAGE, _stderr, _stdout
    from ..convert import convert
    _sigterm_unwinds()
    try:
        report = convert(src, dst, to=to, target=target, verifier_name=verifier_name,  # type: ignore[arg-type]
                         verifier_architectures=verifier_archs, dry_run=dry_run, force=force)
    except UsageError as e:
        _stderr().print(f"[bold red]usage:[/] {escape(e.message)}", markup=True)
        if e.hint:
            _stderr().print(f"  hint: {e.hint}")
        return EXIT_USAGE
    except ConversionError as e:
        if fmt == "json":
            click.echo(json.dumps({"src": src, "dst": dst, "to": to, "refused": True, "reason": e.message,
                                   "hint": e.hint or None}, indent=2))
        err = _stderr()
        err.print(f"[bold red]refused:[/] {escape(str(e))}", markup=True)   # messages may hold [brackets]
        if e.hint:
            err.print(f"  hint: {e.hint}")
        return EXIT_FINDINGS
    if fmt == "json":
        click.echo(json.dumps(report.to_json(), indent=2, default=str))
    else:
        render_text(report, _stdout())
    return EXIT_OK


def _sigterm_unwinds() -> None:
    """SIGTERM runs the cleanup in `finally` like Ctrl-C does (SIGKILL is handled by the next run)."""
    def handler(signum: int, frame: Any) -> None:
        sys.exit(128 + signum)
    try:
        signal.signal(signal.SIGTERM, handler)
    except ValueError:     # not the main thread (e.g. embedded); the default action stays
        pass
