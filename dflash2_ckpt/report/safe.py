"""Text from a checkpoint made safe for a person's terminal and for line-based channels.

Tensor names, config strings, directory and Hub subfolder names are attacker-controlled. Written raw,
ESC sequences clear or retitle the terminal, a carriage return overwrites what was printed, and
bidirectional overrides reorder it. Every human-facing format shows such characters as visible
escapes (`\\x1b`, `\\u202e`) instead.
"""

from __future__ import annotations

import re

# C0 except tab and newline, DEL, C1, the bidirectional / zero-width controls (Trojan Source), and lone
# surrogates (JSON's "\\ud800": no encoding can write them, so a stream raises on them)
_CONTROL = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200b-\u200f\u2028-\u202e\u2066-\u2069\ufeff\ud800-\udfff]"
)
_CONTROL_NL = re.compile(
    "[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u061c\u200b-\u200f\u2028-\u202e\u2066-\u2069\ufeff\ud800-\udfff]"
)


def _esc(m: re.Match[str]) -> str:
    c = ord(m.group())
    return f"\\x{c:02x}" if c < 0x100 else f"\\u{c:04x}"


def printable(text: str, *, keep_cr_lf: bool = False) -> str:
    """`text` with control characters shown as escapes; newlines kept (and CR too with keep_cr_lf,
    for a channel that escapes both itself)."""
    return (_CONTROL_NL if keep_cr_lf else _CONTROL).sub(_esc, text)


_BREAKS = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}
_BREAK = re.compile("[\n\r\t]")
# a line the GitHub runner would run as a workflow command: `::` after leading whitespace (the runner trims
# Unicode whitespace, as str.lstrip does) and style codes; the legacy `##[` form is found anywhere in a line
_COMMAND_START = re.compile(r"^((?:\x1b\[[0-9;]*m|[^\S\n])*):(?=:)", re.M)
_LEGACY = "##["


def one_line(text: str) -> str:
    """A value from outside (a path, a name, a glob, a config string, a parser's message) for a text sink:
    every control character shown as an escape, newlines and tabs too, so it stays on its line."""
    return printable(_BREAK.sub(lambda m: _BREAKS[m.group()], text))


def guard_lines(text: str) -> str:
    """The text sink's last step, over everything printed: no line may start with `::` (a GitHub workflow
    command when a CI log shows it) nor hold `##[`; the colon shows as `\\x3a` instead. A value escaped
    with one_line cannot start a line; this also covers a value that is printed first on its line."""
    return _COMMAND_START.sub(lambda m: m.group(1) + "\\x3a", text).replace(_LEGACY, "##\\x5b")
