"""`dflash2-ckpt hook config|verify|smoke FILES...`: the pre-commit entry points (dflash2_ckpt.usecases.hooks)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from .completion import complete_path
from .errors import guarded
from .options import (
    check_statistics,
    configured,
    emit,
    exit_zero_option,
    fix_options,
    format_option,
    output_option,
    select_options,
    statistics_option,
    strict_option,
)


@click.group("hook", short_help="pre-commit entry points: config, verify and smoke")
def command() -> None:
    """pre-commit entry points: FILES are mapped to their checkpoint directories, each checked once."""


def _run(
    files: tuple[str, ...],
    level: str,
    settings_for: Callable[[str], Any],
    fmt: str,
    outputs: tuple[tuple[str, str], ...] = (),
    statistics: bool = False,
    exit_zero: bool = False,
    fixes: tuple[bool, bool, bool] = (False, False, False),
) -> int:
    """Each checkpoint directory judged by the settings resolved for it (its per-path entries, the
    command line over them)."""
    from ..usecases.hooks import Options, run_hook  # lazy: usecases.hooks loads only on this path

    check_statistics(statistics, fmt, outputs)

    def options(d: Path) -> Options:
        v = settings_for(str(d)).values
        return Options(
            tuple(v["select"]), tuple(v["ignore"]), v["target"], bool(v["strict"]), tuple(v["engines"])
        )

    def run() -> int:
        return emit(
            run_hook(
                files,
                level,  # type: ignore[arg-type]
                options=options,
            ),
            fmt,
            outputs=outputs,
            statistics=statistics,
            exit_zero=exit_zero,
        )

    if not (fixes[0] or fixes[1]):
        return run()
    from .fixing import run_fixes  # lazy: cli.fixing loads only on this path

    return run_fixes(
        run_hook(
            files,
            level,  # type: ignore[arg-type]
            options=options,
        ).parts,
        *fixes,
        rerun=run,
    )


def _level_command(level: str, name: str, doc: str) -> None:
    @command.command(name=name, help=doc)
    @click.argument("files", nargs=-1, shell_complete=complete_path)
    @strict_option
    @exit_zero_option
    @select_options
    @statistics_option
    @fix_options
    @click.option("--target", default=None, type=click.Path(), help="Target model directory to pair with.")
    @format_option
    @output_option
    @guarded
    @configured(each=True)
    def run(
        files: tuple[str, ...],
        strict: bool,
        exit_zero: bool,
        select: str | None,
        ignore: str | None,
        statistics: bool,
        apply_fixes: bool,
        show_diff: bool,
        unsafe_fixes: bool,
        target: str | None,
        fmt: str,
        settings_for: Callable[[str], Any],
        outputs: tuple[tuple[str, str], ...] = (),
    ) -> int:
        return _run(
            files,
            level,
            settings_for,
            fmt,
            outputs,
            statistics,
            exit_zero,
            (apply_fixes, show_diff, unsafe_fixes),
        )


_level_command("config", "config", "Config-level checks of each config.json (no weights opened).")
_level_command(
    "headers", "verify", "Header-level verify of each checkpoint directory (config, index, headers)."
)


@command.command(name="smoke", context_settings={"ignore_unknown_options": True})
@click.argument("files", nargs=-1, type=click.UNPROCESSED)
@guarded
def hook_smoke(files: tuple[str, ...]) -> int:
    """Run `dflash2-ckpt smoke` once per checkpoint directory (options before the files are passed on)."""
    # lazy: usecases.hooks loads only on this path
    from ..usecases.hooks import checkpoint_dirs, run_smoke_hook

    opts = [f for f in files if f.startswith("-")]
    return run_smoke_hook(checkpoint_dirs(f for f in files if not f.startswith("-")), opts)
