"""`dflash2-ckpt verify PATH`: header-level checks, optionally the smoke forward (dflash2_ckpt.usecases.verify_smoke.check)."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

import click

from .completion import complete_path
from .errors import guarded
from .options import (
    check_statistics,
    configured,
    emit,
    engine_option,
    exit_zero_option,
    fix_options,
    format_option,
    hub_options,
    open_source,
    open_target,
    output_option,
    parse_codes,
    select_options,
    statistics_option,
    strict_option,
    target_option,
)
from .progress import progress


@click.command("verify", short_help="Check a drafter: config, headers, v1/v2, causality, pairing")
@click.argument("path", shell_complete=complete_path)
@target_option()
@format_option
@output_option
@strict_option
@exit_zero_option
@select_options
@statistics_option
@fix_options
@click.option(
    "--smoke",
    "with_smoke",
    is_flag=True,
    help="Then run the smoke forward on the tensors (needs the [smoke] extra: torch, triton).",
)
@click.option(
    "--scan",
    is_flag=True,
    help="Also read every floating-point tensor (streamed, bounded memory) and report NaN / Inf (DF611).",
)
@engine_option(
    "Judge causality against these engine profiles, e.g. vllm@0.29.0 (repeatable; default: the "
    "newest of each engine that supports this drafter's version)."
)
@hub_options
@guarded
@configured("path")
def command(
    path: str,
    target: str | None,
    fmt: str,
    strict: bool,
    exit_zero: bool,
    select: str | None,
    ignore: str | None,
    statistics: bool,
    apply_fixes: bool,
    show_diff: bool,
    unsafe_fixes: bool,
    with_smoke: bool,
    scan: bool,
    engines: tuple[str, ...],
    revision: str | None,
    subfolder: str | None,
    token: str | None,
    outputs: tuple[tuple[str, str], ...] = (),
) -> int:
    """Check config, tensor headers, v1/v2 identity, causality and target pairing.

    Reads no tensor data unless --scan or --smoke is given."""
    from ..usecases.verify_smoke import check  # lazy: usecases.verify_smoke loads only on this path

    check_statistics(statistics, fmt, outputs)
    sel, ign = parse_codes(select, "--select"), parse_codes(ignore, "--ignore")

    def run() -> int:
        with progress("scan", fmt=fmt) if scan else contextlib.nullcontext(None) as update:
            result = check(
                open_source(path, revision, token, subfolder),
                target=open_target(target, token),
                select=sel,
                ignore=ign,
                scan=scan,
                smoke=with_smoke,
                strict=strict,
                engines=engines,
                progress=None if update is None else lambda i, n, name: update(i, n, name, ""),
            )
        return emit(result, fmt, strict, outputs, statistics=statistics, exit_zero=exit_zero)

    if not (apply_fixes or show_diff):
        return run()
    from ..usecases.verify import verify  # the headers only: the smoke runs on the fixed files, in run()
    from .fixing import run_fixes  # lazy: cli.fixing loads only on this path

    if apply_fixes and os.path.isdir(os.path.join(path, subfolder or "")):
        from ..usecases.fix import clean_stale  # a killed --fix's journal restored before reading

        for line in clean_stale(Path(path, subfolder or "")):
            click.echo(line, err=True)
    found = verify(
        open_source(path, revision, token, subfolder),
        target=open_target(target, token),
        select=sel,
        ignore=ign,
        engines=engines,
    )
    return run_fixes([found], apply_fixes, show_diff, unsafe_fixes, run, reading=[target])
