r"""The markdown / HTML sink (a model card, a table pasted into one): a value from outside is shown, not run.

A base model, a directory name or a tokenizer record can hold `[x](https://evil.example)`, `<img onerror=x>`,
a backtick that closes a code span, or a newline and `---` that starts a block. `md_value` puts the value on
one line (control characters, newlines included, as `\uXXXX` escapes) inside a code span whose backtick fence
is longer than any run of backticks in it: markdown, HTML and autolinks are all inert there. `md_cell` is the
same for a table cell (GFM splits cells at `|` even inside code spans). A fenced block (`md_block`) gets a
fence longer than any in its text. (The card is written by a use case, below report/: hence its own module.)
"""

from __future__ import annotations

import re
import unicodedata
from typing import Any

_TICKS = re.compile("`+")
# a Hub repo id (or a bare name): safe to print as it is and to put in a huggingface.co URL
REPO_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,95}(/[A-Za-z0-9][A-Za-z0-9_.-]{0,95})?")


def _shown(c: str) -> str:
    return f"\\u{ord(c):04x}" if unicodedata.category(c) in _HIDDEN else c


# controls, format (bidi, zero-width), surrogates, private use, unassigned, line and paragraph separators
_HIDDEN = {"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"}


def one_line(text: str, keep_newlines: bool = False) -> str:
    """`text` with every character that is not visible text shown as an escape (newlines kept on request)."""
    return "".join(c if keep_newlines and c == "\n" else _shown(c) for c in text)


def _fence(text: str) -> str:
    return "`" * (max((len(m.group()) for m in _TICKS.finditer(text)), default=0) + 1)


def md_value(value: Any) -> str:
    text = one_line(str(value))
    fence = _fence(text)
    pad = " " if text.startswith("`") or text.endswith("`") or not text.strip() else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def md_cell(value: Any) -> str:
    return md_value(value).replace("|", "\\|")


def is_repo_id(value: Any) -> bool:
    return isinstance(value, str) and REPO_ID.fullmatch(value) is not None and ".." not in value


def md_block(text: str, info: str = "") -> str:
    """`text` as a fenced code block (control characters shown as escapes; its lines kept)."""
    body = one_line(text, keep_newlines=True)
    fence = "`" * max(3, len(_fence(body)))
    return f"{fence}{info}\n{body}\n{fence}"
