"""Text layout of a hook run: ruff's concise format, one line per finding, `path:line:col: CODE message`.

pre-commit shows hook output as is, editors and terminals turn `path:line:col` into a link, and grep
finds one finding per line; the findings table stays for `verify` on a terminal. A finding without a
line (a tensor, a shard) sits at 1:1 of its file; a warning or info says so at the end. Each failing directory ends with one verdict line.
"""

from __future__ import annotations

from typing import IO, Any

from ..findings import fix_marker
from .locate import locate
from .safe import guard_lines, one_line


def concise_lines(run: Any) -> list[str]:
    lines = []
    for n, part in enumerate(run.parts):
        for f, loc in locate(str(part.subject), part.findings):
            message = one_line(" ".join(f.message.split()))  # one finding, one line
            note = "" if f.severity == "error" else f" ({f.severity})"
            lines.append(f"{one_line(loc.uri)}:{loc.line or 1}:1: {f.code}{fix_marker(f)} {message}{note}")
        if run.part_failed(n):
            lines.append(f"{one_line(str(part.subject))}: FAILED ({run.level} checks)")
    # configs that are no drafter's, and why
    lines += [f"{one_line(path)}: {one_line(why)}" for path, why in run.skipped]
    return lines


def render_plain(run: Any, stream: IO[str]) -> None:
    """The lines, values escaped (report/safe.py) and no line a workflow command: what rich printed for
    them, without loading rich into every pre-commit run (report/text.py's layout prints the same)."""
    stream.write(guard_lines("".join(line + "\n" for line in concise_lines(run))))
