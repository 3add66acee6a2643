"""`dflash2-ckpt engines`: the engine list as text (the answer first, within 100 columns) or JSON."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from typing import IO, Any


def _span(first: str, last: str) -> str:
    return f"{first}-{last}" if first != last else first


def _text(doc: dict[str, Any]) -> str:
    """The answer first: one line per engine with its checked edge, then its profiles indented."""
    lines = []
    for e in doc["engines"]:
        edge = _span(e["checked_from"], e["checked_through"]) if e["checked_from"] else "no release read"
        lines.append(f"{e['engine']} ({e['label']}): releases checked {edge}")
        for p in e["profiles"]:
            checked = _span(p["checked_from"], p["checked_through"]) if p["checked_from"] else "none read"
            loads = "DFlash " + ", ".join(p["drafts"]) if p["drafts"] else "no DFlash"
            what = (
                f"{loads}; reads {', '.join(p['reads'])}"
                if p.get("verified", True)
                else "unverified: compiled, its DFlash code cannot be read"
            )
            lines.append(f"  {p['versions']:<17} {checked:<15} {what}")
            if p["families"]:  # the named families on a line of their own: the row stays within 100 columns
                lines.append(f"  {'':<17} {'':<15} families: {', '.join(p['families'])}")
    lines.append(
        "A version outside an engine's checked releases is judged as the nearest one "
        "(compat/verify --engine NAME@VERSION: DF816)."
    )
    return "\n".join(lines)


FORMATS: dict[str, Callable[[dict[str, Any]], str]] = {
    "text": _text,
    "json": lambda d: json.dumps(d, indent=2),
}


def render(doc: dict[str, Any], fmt: str, stream: IO[str] | None = None) -> None:
    (stream if stream is not None else sys.stdout).write(FORMATS[fmt](doc) + "\n")
