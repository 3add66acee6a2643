"""Where the report files of a command go: which files the command reads (never overwritten), whether
--output-follow-symlinks was given, and which reports this run already wrote (never replaced by an error
document). The writing itself is report/write.py; cli/errors.py writes the error documents through it.
`--output FORMAT=-` is stdout: that format is printed there in place of --format's, no file is made."""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

import click

from ..report import render

if TYPE_CHECKING:
    from ..sources.safe_write import Inputs

Output = tuple[str, str]  # (format, file) from --output FORMAT=FILE
FOLLOW, WRITTEN = "dflash2.output_follow_symlinks", "dflash2.outputs_written"
STDOUT = "-"


def stdout_format(outputs: Iterable[Output], fmt: str) -> str:
    """What stdout carries: the format of an `--output FORMAT=-`, else --format's (an empty FORMAT, audit's
    bare `-o -`, is --format's)."""
    return next((o or fmt for o, path in outputs if path == STDOUT), fmt)


def remember_follow(ctx: click.Context, param: click.Parameter, value: bool) -> None:
    ctx.meta[FOLLOW] = value


# options naming a checkpoint as plain text (a path or a Hub repo id, so not typed click.Path)
CHECKPOINT_OPTIONS = ("target", "reference")


def read_paths(ctx: click.Context | None) -> list[str]:
    """The paths a command reads: its arguments (the checkpoint, the hook's files), its click.Path options
    (settings, prompts, lists) and --target / --reference, and the checkpoint's --subfolder."""
    if ctx is None:
        return []
    values: list[str] = []
    for param in ctx.command.params:
        if not (
            isinstance(param, click.Argument)
            or isinstance(param.type, click.Path)
            or param.name in CHECKPOINT_OPTIONS
        ):
            continue
        v = ctx.params.get(param.name or "")
        values += (
            [v]
            if isinstance(v, str)
            else [x for x in v if isinstance(x, str)]
            if isinstance(v, tuple)
            else []
        )
    sub = ctx.params.get("subfolder")
    return values + ([os.path.join(p, sub) for p in values] if isinstance(sub, str) else [])


def other_inputs(ctx: click.Context | None, argv: list[str] | None = None) -> Inputs:
    """The directories of --target / --reference, whose existing files no report replaces (the checkpoint's
    own folder may hold the reports: a CI checkout). From `argv` when click refused the command line."""
    from ..sources.safe_write import inputs  # lazy: sources.safe_write loads only on this path

    if argv is not None:
        flags = {"--target", "--reference", "-r"}
        return inputs([v for k, v in zip(argv, argv[1:]) if k in flags])
    params = ctx.params if ctx is not None else {}
    return inputs([v for n in CHECKPOINT_OPTIONS if isinstance(v := params.get(n), str)])


def write_outputs(report: Any, outputs: Iterable[Output], *, verbose: bool = False) -> bool:
    """Each --output file gets the whole report in its format (the machine-output contract, per file): every
    destination checked first, then all written atomically (report/write.py); an output to `-` is printed
    on stdout after them. True when it was: the caller then prints nothing more there."""
    outputs = list(outputs)
    to_stdout = [fmt for fmt, path in outputs if path == STDOUT]
    outputs = [o for o in outputs if o[1] != STDOUT]
    if not outputs:
        return _print(report, to_stdout, verbose)
    from ..report.write import destination, files_read, write_files  # (tempfile, shutil): files only

    ctx = click.get_current_context(silent=True)
    follow = bool(ctx and ctx.meta.get(FOLLOW))
    reading = files_read(read_paths(ctx))
    others = other_inputs(ctx)
    dests = [destination(path, follow_symlinks=follow, reading=reading, inputs=others) for _, path in outputs]
    write_files(
        (d, functools.partial(render, report, fmt, verbose=verbose)) for d, (fmt, _) in zip(dests, outputs)
    )
    if ctx is not None:
        ctx.meta.setdefault(WRITTEN, set()).update(path for _, path in outputs)
    return _print(report, to_stdout, verbose)


def _print(report: Any, formats: list[str], verbose: bool = False) -> bool:
    for fmt in formats:  # at most one: the option refuses a second `-`
        render(report, fmt, sys.stdout, verbose=verbose)
    return bool(formats)
