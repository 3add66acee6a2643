"""Text that fits the reader's terminal: the width to lay out for, prose wrapped with a hanging indent,
shell commands broken at their options, and engine citations taken out of a message for the short view.

Off a terminal the width is $COLUMNS when set, else 100: a report piped into a file or a CI log reads
the same as on a standard terminal, and a test sets the width it checks.
"""

from __future__ import annotations

import os
import re
import textwrap
from collections.abc import Iterable, Mapping

DEFAULT_WIDTH = 100
MIN_WIDTH = 40


def columns(env: Mapping[str, str] | None = None) -> int:
    """The width for output that is not a terminal: $COLUMNS when it is a number, else 100."""
    raw = (os.environ if env is None else env).get("COLUMNS", "")
    return max(MIN_WIDTH, int(raw)) if raw.strip().isdigit() else DEFAULT_WIDTH


def wrap(text: str, width: int, *, indent: str = "", hanging: str = "") -> list[str]:
    """`text` as lines of at most `width` columns: the first led by `indent`, the rest by `hanging`. Words
    longer than a line (a path, a citation) are folded, never cut."""
    return textwrap.wrap(
        text,
        width,
        initial_indent=indent,
        subsequent_indent=hanging or indent,
        break_long_words=True,
        break_on_hyphens=False,
    ) or [indent.rstrip()]


# a shell word: runs of unquoted text and quoted strings, kept whole
_WORD = re.compile(r"""(?:[^\s'"]+|'[^']*'|"(?:[^"\\]|\\.)*")+""")


def _units(command: str) -> list[str]:
    """The command's words, an option joined with its value (`--model-path TARGET`)."""
    words = _WORD.findall(command)
    out: list[str] = []
    for w in words:
        if out and out[-1].startswith("-") and " " not in out[-1] and not w.startswith("-"):
            out[-1] += " " + w
        else:
            out.append(w)
    return out


def _split_json(unit: str, room: int) -> list[str]:
    """A quoted JSON object too long for a line, broken after its commas (a newline between JSON tokens
    is white space to the parser, and a quoted newline stays inside the one shell word)."""
    if not (unit.startswith("'{") and unit.endswith("}'")):
        return [unit]
    lines: list[str] = []
    for part in re.split(r'(?<=,) (?=")', unit):
        if lines and len(lines[-1]) + 1 + len(part) <= room:
            lines[-1] += " " + part
        else:
            lines.append(part)
    return lines


def command_lines(command: str, width: int, indent: str) -> list[str]:
    """A shell command that can be pasted as it is: lines of at most `width` columns where the words
    allow, each the shell joins to the next ending in ` \\`, continuations indented two more; an option
    stays with its value where both fit."""
    hang = indent + "  "
    room = width - 2  # the ` \\` that may follow
    lines: list[tuple[str, bool]] = []  # (text, continues inside one quoted word)
    for unit in _units(command):
        if lines and len(lines[-1][0]) + 1 + len(unit) <= room:
            lines[-1] = (lines[-1][0] + " " + unit, lines[-1][1])
        elif not lines or len(hang + unit) <= room:
            lines.append(((hang if lines else indent) + unit, False))
        else:
            opt, _, value = unit.partition(" ") if unit.startswith("-") else ("", "", unit)
            if opt and len(lines[-1][0]) + 1 + len(opt) <= room:
                lines[-1] = (lines[-1][0] + " " + opt, lines[-1][1])  # the option ends the line
            elif opt:
                lines.append((hang + opt, False))
            pieces = [value] if len(hang + value) <= room else _split_json(value, room - len(hang) - 2)
            lines.append((hang + pieces[0], False))
            lines += [(hang + "  " + p, True) for p in pieces[1:]]
    return [
        text + (" \\" if n + 1 < len(lines) and not lines[n + 1][1] else "")
        for n, (text, _) in enumerate(lines)
    ]


_CITE = re.compile(
    r"[\w.-]+==[\w.+-]+(?:\.\.[\w.+-]+)?:\S+ (?:has|lacks) `|[\w-]+/[\w.-]+#\d+|docs/contract\.md#[\w-]+|docs/engines\.md"
)


def _groups(text: str) -> Iterable[tuple[int, int]]:
    """(start, end) of every top-level parenthesised group, code spans (`...`) read as opaque."""
    depth, start, code = 0, -1, False
    for i, c in enumerate(text):
        if c == "`":
            code = not code
        elif code:
            continue
        elif c == "(":
            if depth == 0:
                start = i
            depth += 1
        elif c == ")" and depth:
            depth -= 1
            if depth == 0:
                yield start, i + 1


def without_citations(message: str) -> str:
    """`message` less the parenthesised citations of released code or issues it carries (`(vllm==0.33.0:
    path has `...`)`): a group that opens with a citation goes; another group stays, less the citations
    inside it (a finding quoted within another keeps its words). The full text is in --verbose and json."""
    out, at = [], 0
    for start, end in _groups(message):
        inner = message[start + 1 : end - 1]
        out.append(message[at:start])
        if _CITE.match(inner.lstrip()):
            out[-1] = out[-1].rstrip(" ")
        else:
            out.append("(" + without_citations(inner) + ")")
        at = end
    return ("".join(out) + message[at:]).strip()
