"""`dflash2-ckpt compat PATH`: a verdict per engine profile (or the named ones) and the serve command.

Exit codes: 0 every named engine loads it (without --engine: some engine loads it), 1 otherwise,
2 an engine name or version no profile covers, 3 the checkpoint could not be read.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from ..errors import Dflash2Error
from ..report import render
from .completion import complete_path
from .errors import EXIT_FINDINGS, EXIT_OK, guarded
from .options import (
    configured,
    engine_option,
    format_option,
    hub_options,
    open_source,
    open_target,
    output_option,
    verbose_option,
)
from .outputs import write_outputs

if TYPE_CHECKING:
    from ..checkpoint.target import TargetConfig
    from ..sources import Source


@click.command("compat", short_help="Which engine releases load this drafter, and how to serve it")
@click.argument("path", shell_complete=complete_path)
@engine_option("Judge only these engines, e.g. vllm@0.29.0, sglang, llama.cpp@b10700 (repeatable).")
@click.option(
    "--target",
    default=None,
    help="Target model (directory or Hub repo id): verify's pairing "
    "checks run against its config.json, and it is written into the serve commands.",
)
@format_option
@verbose_option
@output_option
@hub_options
@guarded
@configured("path")
def command(
    path: str,
    engines: tuple[str, ...],
    target: str | None,
    fmt: str,
    revision: str | None,
    subfolder: str | None,
    token: str | None,
    outputs: tuple[tuple[str, str], ...] = (),
    verbose: bool = False,
) -> int:
    """Will this drafter load in the engine you run, and with which command?"""
    from ..convert.advice import compat  # lazy: convert.advice loads only on this path

    report = compat(
        open_source(path, revision, token, subfolder),
        engines=engines,
        target=target,
        pair=_pair(target, token),
    )
    if not write_outputs(report, outputs, verbose=verbose):
        render(report, fmt, verbose=verbose)
    return EXIT_FINDINGS if report.failed() else EXIT_OK


def _pair(target: str | None, token: str | None) -> str | Source | TargetConfig | None:
    """The target the pairing checks run against: a local path as given, a Hub repo opened (config only); a
    repo that cannot be reached is a target not read (the verdicts say so, DF851), not a failed command."""

    if target is None:
        return None
    try:
        return open_target(target, token)
    except Dflash2Error as e:
        from ..checkpoint.target import TargetConfig  # lazy: checkpoint.target loads only on this path

        return TargetConfig(target, None, e.message)
