"""`--fix` / `--diff` on the command line: plan the fixes of verified reports, show or apply them, say what changed."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import click

from ..errors import UsageError
from ..report.safe import guard_lines, one_line, printable
from .errors import EXIT_FINDINGS, EXIT_OK


def run_fixes(
    reports: Sequence[Any],
    apply_fixes: bool,
    show_diff: bool,
    unsafe: bool,
    rerun: Callable[[], int],
    reading: Sequence[str | None] = (),
) -> int:
    """With --diff: the diff on stdout, exit 1 when there is one. With --fix: apply, report on stderr what
    changed, then `rerun` (verify again and render, its exit code). `reading`: the run's other inputs (the
    target), which no fix may write over."""
    from ..sources.safe_write import inputs  # lazy: sources.safe_write loads only on this path
    from ..usecases.fix import apply, plan  # lazy: usecases.fix loads only on this path

    if apply_fixes and show_diff:
        raise UsageError("--fix and --diff: choose one (--diff shows what --fix would write)")
    plans = [plan(r.findings, r.checkpoint, unsafe=unsafe) for r in reports if r.checkpoint is not None]
    for p in plans:
        for why in p.refused:
            click.echo(f"not fixed: {one_line(why)}", err=True)
    if show_diff:
        click.echo(guard_lines(printable("".join(p.diff() for p in plans))), nl=False)
        n = sum(len(p.applied) for p in plans if p.files)
        click.echo(f"Would fix {n} finding(s)." if n else "Nothing to fix.", err=True)
        return EXIT_FINDINGS if any(p.files for p in plans) else EXIT_OK
    for p in plans:
        if p.files:
            for line in apply(p, inputs(reading)):
                click.echo(guard_lines(one_line(line)), err=True)
            click.echo(
                guard_lines(
                    one_line(f"{p.root}: fixed {len(p.applied)} finding(s) in {', '.join(sorted(p.files))}")
                ),
                err=True,
            )
            for desc in dict.fromkeys(f.fix.description for f in p.applied if f.fix is not None):
                click.echo(f"  {one_line(desc)}", err=True)
    if not any(p.files for p in plans):
        click.echo("Nothing to fix.", err=True)
    return rerun()
