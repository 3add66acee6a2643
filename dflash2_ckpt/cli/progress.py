"""Where a long command is, on stderr (stdout keeps the report): the one progress helper of audit, diff,
smoke and accept. On a terminal a transient rich bar (what, done/total, a note such as the running τ,
elapsed and remaining time); off one (CI logs, pipes) plain lines a log keeps: the command's own, or by
default one at each tenth of the way, for text output (a JSON reader may merge stderr into stdout; accept
keeps its lines in every format). Labels come from checkpoints and prompts: shown escaped.

rich (about 0.06 CPU-s to import) loads only when stderr is a terminal or an environment variable rich
reads could make it one.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Callable, Iterator
from typing import Any

from ..report.safe import printable

# (done, total or None while unknown, label, note): a library's progress calls go through one of these
Update = Callable[[int, "int | None", str, str], None]
# the plain line for (done, total, label, note), or None for no line at this step
PlainLine = Callable[[int, "int | None", str, str], "str | None"]


def _terminal() -> Any:
    """stderr's rich console when rich would call it a terminal, else None."""
    if not (
        sys.stderr.isatty()
        or any(os.environ.get(k) is not None for k in ("FORCE_TERMINAL", "TTY_COMPATIBLE", "FORCE_COLOR"))
    ):
        return None
    from rich.console import Console  # heavy: rich loads only when this runs

    console = Console(stderr=True)
    return console if console.is_terminal else None


def tenths(verb: str) -> PlainLine:
    """The default plain line: `verb: 40/100 name`, at each tenth of the way and at the end."""
    shown = [-1]

    def line(done: int, total: int | None, label: str, note: str) -> str | None:
        if not total or done <= 0:
            return None
        tenth = done * 10 // total
        if tenth == shown[0] and done != total:
            return None
        shown[0] = tenth
        return f"{verb}: {done}/{total} {printable(label)[-60:]}" + (f" ({note})" if note else "")

    return line


# the output formats whose runs write plain progress lines off a terminal: a machine format's reader may
# merge stderr into stdout (`2>&1`), so those runs stay silent there
LINE_FORMATS = ("text",)


@contextlib.contextmanager
def progress(verb: str, plain: PlainLine | None = None, *, fmt: str = "text") -> Iterator[Update]:
    """Yield the update function for one long run; `plain` writes the lines off a terminal (default:
    `tenths(verb)`), for an output format of LINE_FORMATS."""
    console = _terminal()
    if console is None and fmt not in LINE_FORMATS:

        def nothing(done: int, total: int | None, label: str = "", note: str = "") -> None:
            return None

        yield nothing
        return
    if console is None:
        write = plain or tenths(verb)

        def line(done: int, total: int | None, label: str = "", note: str = "") -> None:
            text = write(done, total, label, note)
            if text is not None:
                print(printable(text), file=sys.stderr, flush=True)

        yield line
        return
    from rich.markup import escape  # heavy: rich loads only when this runs

    # heavy: rich loads only when this runs
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    with Progress(
        TextColumn(f"{escape(verb)}: {{task.description}}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[note]}"),
        TimeElapsedColumn(),
        TextColumn("ETA"),
        TimeRemainingColumn(),
        transient=True,
        console=console,
    ) as bar:
        task = bar.add_task("starting", total=None, note="")

        def update(done: int, total: int | None, label: str = "", note: str = "") -> None:
            bar.update(
                task,
                completed=done,
                total=total,
                description=escape(printable(label)[-40:]),
                note=escape(printable(note)),
            )

        yield update
