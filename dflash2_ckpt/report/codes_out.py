"""`dflash2-ckpt codes`: the code list (text lines, the README table or JSON) and one code's page."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from typing import IO

from ..codes import Code, all_codes, as_json, help_uri, markdown_table, page


def _list_text(stream: IO[str]) -> None:
    stream.write(
        "\n".join(f"{c.code}  {c.severity:<7}  {c.name:<28} {c.summary}" for c in all_codes()) + "\n"
    )


def _page_text(c: Code, stream: IO[str]) -> None:
    stream.write("\n".join([*page(c), "", f"Docs: {help_uri(c.code)}"]).removeprefix("### ") + "\n")


LISTS: dict[str, Callable[[IO[str]], object]] = {
    "text": _list_text,
    "markdown": lambda s: s.write(markdown_table() + "\n"),
    "json": lambda s: s.write(json.dumps([as_json(c) for c in all_codes()], indent=2) + "\n"),
}
PAGES: dict[str, Callable[[Code, IO[str]], object]] = {
    "text": _page_text,
    "json": lambda c, s: s.write(json.dumps(as_json(c), indent=2) + "\n"),
}


def render(code: Code | None, fmt: str, stream: IO[str] | None = None) -> None:
    """One code's page, or (None) every code; `fmt` text or json, "markdown" for the list as a table."""
    out = stream if stream is not None else sys.stdout
    if code is None:
        LISTS[fmt](out)
    else:
        PAGES[fmt](code, out)
