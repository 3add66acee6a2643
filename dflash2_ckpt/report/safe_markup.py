"""The text sink's escaping for rich markup (report/text.py and every text layout): a value from outside
(a path, a name, a glob, a config string, a Hub answer, a parser's message) is put on one line
(report/safe.py's one_line) and can never be markup: a tensor named `[bold]x` or `[/]` prints as it is."""

from __future__ import annotations

from typing import Any

from rich.markup import escape

from .safe import one_line


def value(text: Any) -> str:
    return escape(one_line(str(text)))
