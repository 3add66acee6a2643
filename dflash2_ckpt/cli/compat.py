"""`dflash2-ckpt compat PATH`: a verdict per engine profile (or the named ones) and the serve command.

Exit codes: 0 every named engine loads it (without --engine: some engine loads it), 1 otherwise,
2 an engine name or version no profile covers, 3 the checkpoint could not be read.
"""
from __future__ import annotations

import click

from .completion import complete_path
from .errors import EXIT_FINDINGS, EXIT_OK, guarded
from .options import (configured, engine_option, format_option, hub_options, open_source, output_option,
                      verbose_option)
from .outputs import write_outputs


@click.command("compat")
@click.argument("path", shell_complete=complete_path)
@engine_option("Judge only these engines, e.g. vllm@0.29.0, sglang, llama.cpp@b10700 (repeatable).")
@click.option("--target", default=None, help="Target model (path or repo id) written into the serve commands.")
@format_option
@verbose_option
@output_option
@hub_options
@guarded
@configured("path")
def command(path: str, engines: tuple[str, ...], target: str | None, fmt: str, revision: str | None,
            subfolder: str | None, token: str | None, outputs: tuple[tuple[str, str], ...] = (),
            verbose: bool = False) -> int:
    """Will this drafter load in the engine you run, and with which command?"""
    from ..convert.advice import compat
    from ..report import render
    report = compat(open_source(path, revision, token, subfolder), engines=engines, target=target)
    if not write_outputs(report, outputs, verbose=verbose):
        render(report, fmt, verbose=verbose)
    return EXIT_FINDINGS if report.failed() else EXIT_OK
