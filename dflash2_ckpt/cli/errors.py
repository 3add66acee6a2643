"""The one error boundary and the one error table: error type -> exit code, label, next step.

Every command runs inside `guarded`. A typed error becomes one line (or, with a machine format, one
document: `{"error": {"type", "message", "hint", ...attributes}}`) and the exit code of the first row
of ERRORS whose type it is; Ctrl-C exits 130 (with its error document under a machine format, so a
script reading stdout still gets one); DFLASH2_CKPT_DEBUG=1 also prints the traceback, and never changes
the exit code (an internal error is 3 with or without it: CI must not read a bug as findings).
"""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import click

from ..errors import (
    AmbiguousRevisionError,
    AmbiguousSubfolderError,
    BudgetError,
    ConfigError,
    ConversionError,
    ConversionUsageError,
    Dflash2Error,
    EngineError,
    EntryNotFoundError,
    GatedRepoError,
    HeaderError,
    HubAccessError,
    HubError,
    HubResponseError,
    HubStatusError,
    HubUnreachableError,
    MeaningChangedError,
    MissingDependencyError,
    OfflineNotCachedError,
    RateLimitedError,
    RepositoryNotFoundError,
    RevisionNotFoundError,
    SourceError,
    SourceFindingsError,
    UnsafeOutputError,
    UnsafePathError,
    UsageError,
    VersionMismatchError,
)

EXIT_OK, EXIT_FINDINGS, EXIT_USAGE, EXIT_CANNOT_RUN, EXIT_INTERRUPTED = 0, 1, 2, 3, 130


@dataclass(frozen=True)
class Outcome:
    exit_code: int
    label: str  # what kind of failure, in a word
    next_step: str  # said when the error carries no hint of its own


# first matching row wins: subclasses before their bases
ERRORS: list[tuple[type[BaseException], Outcome]] = [
    (
        KeyboardInterrupt,
        Outcome(
            EXIT_INTERRUPTED, "interrupted", "run it again; a destination is only ever replaced once complete"
        ),
    ),
    (ConversionUsageError, Outcome(EXIT_USAGE, "usage", "see `dflash2-ckpt convert --help`")),
    (UnsafeOutputError, Outcome(EXIT_USAGE, "unsafe output", "write the report to another file")),
    (UsageError, Outcome(EXIT_USAGE, "usage", "see `dflash2-ckpt COMMAND --help`")),
    (
        SourceFindingsError,
        Outcome(EXIT_FINDINGS, "refused", "fix the source, or accept the codes with --accept-findings"),
    ),
    (
        MeaningChangedError,
        Outcome(
            EXIT_FINDINGS, "refused", "`dflash2-ckpt convert --dry-run` shows what each engine would build"
        ),
    ),
    (ConversionError, Outcome(EXIT_FINDINGS, "refused", "`dflash2-ckpt convert --dry-run` shows the plan")),
    (MissingDependencyError, Outcome(EXIT_CANNOT_RUN, "missing dependency", "install the extra named above")),
    (
        BudgetError,
        Outcome(
            EXIT_CANNOT_RUN, "over budget", "a GPU, --layers N or --requests 1, or a larger --max-memory"
        ),
    ),
    (
        HeaderError,
        Outcome(EXIT_CANNOT_RUN, "unreadable header", "re-download or re-save the safetensors file"),
    ),
    (ConfigError, Outcome(EXIT_CANNOT_RUN, "bad config", "`dflash2-ckpt verify` lists what is wrong")),
    (VersionMismatchError, Outcome(EXIT_CANNOT_RUN, "wrong version", "use the loader for the other version")),
    (
        RepositoryNotFoundError,
        Outcome(
            EXIT_CANNOT_RUN,
            "repo not found",
            "check the spelling; for a private repo pass --token or set HF_TOKEN",
        ),
    ),
    (AmbiguousRevisionError, Outcome(EXIT_CANNOT_RUN, "ambiguous revision", "give more of the commit hash")),
    (
        RevisionNotFoundError,
        Outcome(
            EXIT_CANNOT_RUN,
            "revision not found",
            "give an existing branch, tag or commit with --revision (or @rev)",
        ),
    ),
    (EntryNotFoundError, Outcome(EXIT_CANNOT_RUN, "file not found", "check the file name and --subfolder")),
    (
        GatedRepoError,
        Outcome(EXIT_CANNOT_RUN, "gated", "accept the repo's conditions on the Hub, then pass --token"),
    ),
    (
        HubAccessError,
        Outcome(EXIT_CANNOT_RUN, "access denied", "check --token / HF_TOKEN and its read access"),
    ),
    (
        OfflineNotCachedError,
        Outcome(EXIT_CANNOT_RUN, "offline", "unset HF_HUB_OFFLINE, or download the files first"),
    ),
    (
        HubUnreachableError,
        Outcome(EXIT_CANNOT_RUN, "unreachable", "check the connection or proxy (HF_ENDPOINT)"),
    ),
    (
        RateLimitedError,
        Outcome(EXIT_CANNOT_RUN, "rate limited", "wait and retry, or pass a token (higher limits)"),
    ),
    (HubStatusError, Outcome(EXIT_CANNOT_RUN, "Hub error", "retry later; see https://status.huggingface.co")),
    (HubResponseError, Outcome(EXIT_CANNOT_RUN, "unusable Hub answer", "check HF_ENDPOINT; retry later")),
    (HubError, Outcome(EXIT_CANNOT_RUN, "Hub error", "check the repo id, the token and the network")),
    (AmbiguousSubfolderError, Outcome(EXIT_CANNOT_RUN, "several drafters", "name one with --subfolder")),
    (
        UnsafePathError,
        Outcome(EXIT_CANNOT_RUN, "unsafe path", "a file links or climbs outside the checkpoint"),
    ),
    (
        EngineError,
        Outcome(EXIT_CANNOT_RUN, "engine failed", "the engine's last log lines above name the cause"),
    ),
    (
        SourceError,
        Outcome(EXIT_CANNOT_RUN, "cannot read", "check the path or repo id, the token and the network"),
    ),
    (Dflash2Error, Outcome(EXIT_CANNOT_RUN, "error", "")),
    (OSError, Outcome(EXIT_CANNOT_RUN, "I/O error", "check the path, permissions and free space")),
]
INTERNAL = Outcome(
    EXIT_CANNOT_RUN, "internal error", "run again with DFLASH2_CKPT_DEBUG=1 and report the traceback"
)


def outcome_of(e: BaseException) -> Outcome:
    return next((o for t, o in ERRORS if isinstance(e, t)), INTERNAL)


def error_doc(e: BaseException) -> dict[str, Any]:
    """The error as data: type, message, hint, exit code, and the attributes that locate it."""
    o = outcome_of(e)
    if isinstance(e, Dflash2Error):
        message, hint, attrs = e.message, e.hint or o.next_step, e.attributes()
    elif isinstance(e, OSError):
        message, hint, attrs = e.strerror or str(e), o.next_step, ({"path": e.filename} if e.filename else {})
    elif isinstance(e, KeyboardInterrupt):
        message, hint, attrs = "interrupted (Ctrl-C) before the command finished", o.next_step, {}
    else:
        message, hint, attrs = f"{type(e).__name__}: {e}", o.next_step, {}
    return {
        "type": type(e).__name__,
        "message": message,
        "hint": hint or None,
        "label": o.label,
        "exit_code": o.exit_code,
        **attrs,
    }


def debug() -> bool:
    return bool(os.environ.get("DFLASH2_CKPT_DEBUG"))


def fail(e: BaseException, fmt: str, outputs: Iterable[tuple[str, str]] = ()) -> None:
    """Render `e` in `fmt` (and in each --output file) and exit with its code."""
    if debug():
        import traceback  # lazy: traceback loads only on this path

        from ..report.safe import guard_lines, printable  # lazy: report.safe loads only on this path

        sys.stderr.write(guard_lines(printable("".join(traceback.format_exception(e)))))
    from ..report import render_error  # lazy: report loads only on this path
    from .outputs import stdout_format  # lazy: cli.outputs loads only on this path

    doc = error_doc(e)
    outputs = [(o or fmt, path) for o, path in outputs]
    write_error_outputs(doc, outputs)
    out_fmt = stdout_format(outputs, fmt)
    render_error(doc, out_fmt)
    if out_fmt != fmt:
        render_error(doc, "text")  # stdout went to `--output F=-`: the one line on stderr for the person
    sys.exit(doc["exit_code"])


def write_error_outputs(
    doc: Mapping[str, Any], outputs: Iterable[tuple[str, str]], *, argv: list[str] | None = None
) -> None:
    """An --output file holds the error document when the run could not finish (best effort: a file that
    cannot be written is the error being reported, not a second one). It goes through the checks every
    report file does (report/write.py), and never replaces a report this run already wrote. `argv`: the
    command line, when click refused it before the command's parameters existed."""

    # lazy: report.write loads only on this path
    from ..report.write import destination, files_read, write_files

    # lazy: cli.outputs loads only on this path
    from .outputs import FOLLOW, STDOUT, WRITTEN, other_inputs, read_paths

    ctx = click.get_current_context(silent=True)
    meta = ctx.meta if ctx is not None else {}
    if argv is not None:
        follow, reading = "--output-follow-symlinks" in argv, files_read(argv)
    else:
        follow, reading = bool(meta.get(FOLLOW)), files_read(read_paths(ctx))
    others = other_inputs(ctx, argv)
    for ofmt, path in outputs:
        if path in meta.get(WRITTEN, ()) or path == STDOUT:  # stdout: the caller prints it there
            continue
        try:
            dest = destination(path, follow_symlinks=follow, reading=reading, inputs=others)
            write_files([(dest, functools.partial(_render_error_to, doc, ofmt))])
        except (OSError, Dflash2Error):
            pass


def _render_error_to(doc: Mapping[str, Any], fmt: str, stream: Any) -> None:
    from ..report import render_error  # lazy: report loads only on this path

    render_error(doc, fmt, stream, stream)


def guarded(fn: Callable[..., int]) -> Callable[..., None]:
    """The one error boundary of every command: its return value is the exit code."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> None:
        fmt = kwargs.get("fmt") or "text"
        outputs = kwargs.get("outputs") or ()
        try:
            code = fn(*args, **kwargs)
        except KeyboardInterrupt as e:
            fail(e, fmt)
        except (Dflash2Error, OSError) as e:
            fail(e, fmt, outputs)
        except Exception as e:  # noqa: BLE001 - a bug still ends in one line (and the traceback with DEBUG)
            if _is_click(e):
                raise
            fail(e, fmt, outputs)  # DEBUG adds the traceback there; the exit code stays the documented one
        sys.exit(code)

    return wrapper


def _is_click(e: BaseException) -> bool:
    return type(e).__module__.startswith("click")
