"""Command line: each command builds inputs, calls one library function, renders, picks the exit code.

Exit codes: 0 passed, 1 error findings (warnings too with --strict), 2 usage, 3 could not run.
"""
from __future__ import annotations

import os
import sys
import traceback
from typing import Any, Callable

import click
from rich.console import Console

from . import schemas
from .codes import all_codes
from .errors import Dflash2Error
from .findings import validate_selectors

EXIT_OK, EXIT_FINDINGS, EXIT_USAGE, EXIT_CANNOT_RUN = 0, 1, 2, 3


def _stderr() -> Console:
    return Console(stderr=True, highlight=False, soft_wrap=True)


def _stdout() -> Console:
    return Console(highlight=False, soft_wrap=True, width=None if sys.stdout.isatty() else 160)


def guarded(fn: Callable[..., int]) -> Callable[..., None]:
    """The one error boundary: typed errors become one line plus the next step, exit 3."""
    def wrapper(*args: Any, **kwargs: Any) -> None:
        try:
            code = fn(*args, **kwargs)
        except Dflash2Error as e:
            if os.environ.get("DFLASH2_CKPT_DEBUG"):
                traceback.print_exc()
            err = _stderr()
            err.print(f"[bold red]error:[/] {e}", markup=True)
            if e.hint:
                err.print(f"  hint: {e.hint}")
            sys.exit(EXIT_CANNOT_RUN)
        sys.exit(code)
    wrapper.__name__ = fn.__name__
    wrapper.__doc__ = fn.__doc__
    return wrapper


def _codes(value: str | None) -> list[str]:
    if not value:
        return []
    items = [v.strip().upper() for v in value.split(",") if v.strip()]
    try:
        validate_selectors(items)
    except ValueError as e:
        raise click.BadParameter(str(e)) from None
    return items


def open_source(path: str, revision: str | None = None, token: str | None = None) -> Any:
    from .sources import LocalSource
    return LocalSource(path)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="dflash2-ckpt")
def main() -> None:
    """Validate and convert DFlash / DFlash2 draft checkpoints."""


@main.command()
@click.argument("path")
@click.option("--target", type=click.Path(), help="Target model directory (config.json) to pair the drafter with.")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@click.option("--strict", is_flag=True, help="Fail on warnings too.")
@click.option("--select", default=None, help="Only these codes or prefixes, comma-separated (e.g. DF2,DF401).")
@click.option("--ignore", default=None, help="Skip these codes or prefixes, comma-separated.")
@guarded
def verify(path: str, target: str | None, fmt: str, strict: bool, select: str | None, ignore: str | None) -> int:
    """Check config, tensor headers, v1/v2 identity, causality and target pairing. Reads no tensor data."""
    from .report import render_json, render_text
    from .verify import verify as run_verify
    sel, ign = _codes(select), _codes(ignore)
    report = run_verify(open_source(path), target=target, select=sel, ignore=ign)
    if fmt == "json":
        click.echo(render_json(report))
    else:
        render_text(report, _stdout())
    return EXIT_FINDINGS if report.failed(strict) else EXIT_OK


@main.command()
@click.argument("path")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@guarded
def inspect(path: str, fmt: str) -> int:
    """Show what a checkpoint is: dialect, version, geometry, per-layer causality, bytes by component."""
    from .report import render_json, render_summary
    from .verify import inspect as run_inspect
    report = run_inspect(open_source(path))
    if fmt == "json":
        click.echo(render_json(report))
    else:
        render_summary(report, _stdout())
    return EXIT_OK


@main.command()
@click.option("--write", "write_dir", type=click.Path(file_okay=False), help="Write the JSON Schemas into DIR.")
@click.option("--check", "check_dir", type=click.Path(file_okay=False),
              help="Exit 1 when the schemas in DIR differ from the models.")
@click.option("--dialect", type=click.Choice(sorted(schemas.FILES)), help="Print one schema.")
@guarded
def schema(write_dir: str | None, check_dir: str | None, dialect: str | None) -> int:
    """Print, write or check the JSON Schema of each config dialect."""
    if write_dir:
        for p in schemas.write(write_dir):
            click.echo(f"wrote {p}")
        return EXIT_OK
    if check_dir:
        stale = schemas.stale(check_dir)
        for name in stale:
            click.echo(f"stale: {name} (run: dflash2-ckpt schema --write {check_dir})", err=True)
        return EXIT_FINDINGS if stale else EXIT_OK
    gen = schemas.generate()
    click.echo(gen[dialect] if dialect else "\n".join(gen), nl=not dialect)
    return EXIT_OK


@main.command()
@click.option("--markdown", is_flag=True, help="The README table.")
@guarded
def codes(markdown: bool) -> int:
    """List every finding code."""
    click.echo(codes_table() if markdown else "\n".join(
        f"{c.code}  {c.severity:<7}  {c.name:<28} {c.summary}" for c in all_codes()))
    return EXIT_OK


def codes_table() -> str:
    rows = ["| code | name | severity | meaning |", "|---|---|---|---|"]
    rows += [f"| {c.code} | {c.name} | {c.severity} | {c.summary} |" for c in all_codes()]
    return "\n".join(rows)


if __name__ == "__main__":
    main()
