"""inspect's engine tables: each layer's causality under every engine that can run the drafter, and the
keys engines may fill by default (the checkpoint's value next to the one the engine runs with)."""
from __future__ import annotations

from typing import Any, Mapping

from rich.console import Console
from rich.table import Table

from .safe_markup import value


def render_engine_tables(summary: Mapping[str, Any], out: Console) -> None:
    """inspect: every layer's causality under each engine that can run the drafter, then the keys the
    engines may fill by default, the checkpoint's value next to the one the engine runs with."""
    views = summary.get("engines") or []
    layers = summary.get("layers")
    if layers and views:
        t = Table(title="in-block causality per engine")
        t.add_column("layer")
        t.add_column("type")
        for v in views:
            t.add_column(value(v["title"]))
        for row in layers:
            cells = ["-" if row["causal"].get(v["engine"]) is None else
                     ("causal" if row["causal"][v["engine"]] else "bidirectional") for v in views]
            t.add_row(str(row["index"]), value(str(row.get("type_text") or row["type"])), *cells)
        out.print(t)
    filled = [(v, k, d) for v in views for k, d in v["defaults"].items()]
    if filled:
        t = Table(title="keys engines may fill by default or ignore: the checkpoint's value vs what the engine "
                        "runs with")
        for col in ("engine", "key", "checkpoint", "engine uses", "source"):
            t.add_column(col, overflow="fold")
        for v, k, d in filled:
            diverges = d["filled"] or d["checkpoint"] != d["engine"]
            shown = value(str(d["engine"]))
            t.add_row(value(v["title"]), value(k),
                      "(absent)" if d["checkpoint"] is None else value(str(d["checkpoint"])),
                      f"[yellow]{shown}[/]" if diverges else shown, value(d["source"]))
        out.print(t)
