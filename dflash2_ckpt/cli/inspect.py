"""`dflash2-ckpt inspect PATH`: what a checkpoint is (dialect, version, geometry, causality, bytes)."""

from __future__ import annotations

import click

from ..report import render
from .completion import complete_path
from .errors import EXIT_OK, guarded
from .options import format_option, hub_options, open_source, verbose_option


@click.command("inspect", short_help="Show dialect, version, geometry, causality and bytes")
@click.argument("path", shell_complete=complete_path)
@format_option
@verbose_option
@hub_options
@guarded
def command(
    path: str, fmt: str, revision: str | None, subfolder: str | None, token: str | None, verbose: bool = False
) -> int:
    """Show what a checkpoint is: dialect, version, geometry, per-layer causality, bytes by component.

    Exits 0 when it could be read (even if it is not a DFlash drafter: see `passed` in the JSON),
    3 when it cannot (a missing path, an unreadable header or index)."""
    from ..usecases.verify import inspect  # lazy: usecases.verify loads only on this path

    render(inspect(open_source(path, revision, token, subfolder)), fmt, verbose=verbose)
    return EXIT_OK
