"""`dflash2-ckpt config [PATH]`: the effective settings for PATH and where each one came from."""

from __future__ import annotations

import click

from ..errors import UsageError
from .completion import complete_path
from .errors import guarded
from .options import (
    command_line_settings,
    emit,
    engine_option,
    format_option,
    select_options,
    strict_option,
    target_option,
)


@click.command("config", short_help="Show the settings a command would use, and where each came from")
@click.argument("path", required=False, shell_complete=complete_path)
@click.option(
    "--show",
    "show",
    default=None,
    metavar="PATH",
    shell_complete=complete_path,
    help="The checkpoint to resolve the settings for (the same as the PATH argument).",
)
@click.option(
    "--config",
    "config",
    type=click.Path(dir_okay=False),
    default=None,
    help="Settings file (default: the nearest pyproject.toml with [tool.dflash2-ckpt]).",
)
@select_options
@strict_option
@engine_option("An engine given on the command line (repeatable).")
@target_option()
@format_option
@guarded
def command(
    path: str | None,
    show: str | None,
    config: str | None,
    select: str | None,
    ignore: str | None,
    strict: bool,
    engines: tuple[str, ...],
    target: str | None,
    fmt: str,
) -> int:
    """Show the settings a command on PATH would use: defaults < [tool.dflash2-ckpt] < its per-path
    entries (which matched, listed) < the command line (give the same options here to see them win)."""
    from .settings import resolve  # lazy: cli.settings loads only on this path

    if path and show and path != show:
        raise UsageError(f"two paths: {path} and --show {show}", hint="give one")
    params = {"select": select, "ignore": ignore, "strict": strict, "engines": engines, "target": target}
    return emit(
        resolve(config, show or path, given=command_line_settings(click.get_current_context(), params)), fmt
    )
