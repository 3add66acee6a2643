"""Text layout of a conversion's meaning check (engines/meaning.py): one row per engine that reads the source
or the output, what it would build differently, and whether that is a change or a repair."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from rich.console import Console
from rich.table import Table

from .safe_markup import value

_STYLE = {"same": "green", "repaired": "cyan", "changed": "red"}


def _value(v: Any) -> str:
    if isinstance(v, list) and v and all(isinstance(x, bool) for x in v):
        kinds = {"causal" if x else "bidirectional" for x in v}
        return kinds.pop() if len(kinds) == 1 else "/".join("C" if x else "B" for x in v)
    s = json.dumps(v, default=str)
    return s if len(s) <= 48 else s[:45] + "..."


def render_meaning(doc: Mapping[str, Any] | None, console: Console) -> None:
    if not doc:
        return
    table = Table(title="what each engine builds: source vs output", show_header=True, header_style="bold")
    for col in ("engine", "result", "differences"):
        table.add_column(col, overflow="fold")
    for row in doc.get("engines", ()):
        status = row["status"]
        if status == "reads neither":
            continue
        diffs = "; ".join(
            f"{c['field']}: {_value(c['source'])} -> {_value(c['output'])}"
            + (" (repaired: what the source means)" if c["kind"] == "repaired" else "")
            for c in row["changes"]
        )
        style = _STYLE.get(status)
        table.add_row(value(row["engine"]), f"[{style}]{status}[/]" if style else status, value(diffs))
    console.print(table)
    accepted = doc.get("accepted") or ()
    if accepted:
        console.print(value(f"accepted changes: {', '.join(accepted)}"))
