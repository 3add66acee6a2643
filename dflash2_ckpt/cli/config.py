"""`dflash2-ckpt config [PATH]`: the effective settings for PATH and where each one came from."""
from __future__ import annotations

import click

from .completion import complete_path
from .errors import EXIT_OK, guarded
from .options import emit, engine_option, format_option, parse_codes, select_options, strict_option, target_option


@click.command("config")
@click.argument("path", required=False, shell_complete=complete_path)
@click.option("--config", "config", type=click.Path(dir_okay=False), default=None,
              help="Settings file (default: the nearest pyproject.toml with [tool.dflash2-ckpt]).")
@select_options
@strict_option
@engine_option("An engine given on the command line (repeatable).")
@target_option()
@format_option
@guarded
def command(path: str | None, config: str | None, select: str | None, ignore: str | None, strict: bool,
            engines: tuple[str, ...], target: str | None, fmt: str) -> int:
    """Show the settings a command on PATH would use: defaults < [tool.dflash2-ckpt] < its per-path
    entries < the command line (give the same options here to see them win)."""
    from .settings import resolve
    settings = resolve(config, path)
    ctx = click.get_current_context()
    given = {"select": parse_codes(select, "--select") or None, "ignore": parse_codes(ignore, "--ignore") or None,
             "strict": strict or None, "engines": list(engines) or None, "target": target}
    for key, value in given.items():
        if value is not None and ctx.get_parameter_source(key) == click.core.ParameterSource.COMMANDLINE:
            settings.set(key, value, "command line")
    return emit(settings, fmt)
