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
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200b-\u200f\u2028-\u202e\u2066-\u2069\ufeff"
                      "\ud800-\udfff]")
_CONTROL_NL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u061c\u200b-\u200f\u2028-\u202e\u2066-\u2069"
                         "\ufeff\ud800-\udfff]")


def _esc(m: re.Match[str]) -> str:
    c = ord(m.group())
    return f"\\x{c:02x}" if c < 0x100 else f"\\u{c:04x}"


def printable(text: str, *, keep_cr_lf: bool = False) -> str:
    """`text` with control characters shown as escapes; newlines kept (and CR too with keep_cr_lf,
    for a channel that escapes both itself)."""
    return (_CONTROL_NL if keep_cr_lf else _CONTROL).sub(_esc, text)
