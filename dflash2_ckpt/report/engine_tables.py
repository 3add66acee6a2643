"""inspect's engine tables: each layer's causality under every engine that can run the drafter, and the
keys engines may fill by default (the checkpoint's value next to the one the engine runs with).

Each fact is shown once: a value every engine shares is one row ("every engine"), and where engines
differ each value is a row naming the engines that use it. `--verbose` adds where each value comes from.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from .fit import wrap
from .safe import one_line
from .safe_markup import value

EVERY = "every engine"


def who(titles: Sequence[str], all_titles: Sequence[str]) -> str:
    return EVERY if len(titles) == len(all_titles) and len(all_titles) > 1 else ", ".join(titles)


def _causality(views: Sequence[Mapping[str, Any]], layers: Sequence[Mapping[str, Any]], out: Console) -> None:
    """Engines that run every layer alike share a column (most engines agree, so usually one)."""

    def mode(v: Mapping[str, Any], row: Mapping[str, Any]) -> str:
        c = row["causal"].get(v["engine"])
        return "-" if c is None else "causal" if c else "bidirectional"

    groups: dict[tuple[str, ...], list[str]] = {}
    for v in views:
        groups.setdefault(tuple(mode(v, row) for row in layers), []).append(v["title"])
    titles = [v["title"] for v in views]
    t = Table(title="in-block causality", title_justify="left")
    t.add_column("layer")
    t.add_column("type", overflow="fold")
    for names in groups.values():
        t.add_column(value(who(names, titles)), overflow="fold")
    for n, row in enumerate(layers):
        t.add_row(
            str(row["index"]),
            value(str(row.get("type_text") or row["type"])),
            *[modes[n] for modes in groups],
        )
    out.print(t)


def _shown(v: Any) -> str:
    return "(absent)" if v is None else value(str(v))


def _defaults(views: Sequence[Mapping[str, Any]], out: Console, verbose: bool) -> None:
    """One row per key and value the engines run with (a value an engine fills or changes is yellow);
    `verbose`: then where each engine's value comes from, one entry per key and source."""
    titles = [v["title"] for v in views]
    keys = list(dict.fromkeys(k for v in views for k in v["defaults"]))
    t = Table(title="keys engines may fill by default or ignore", title_justify="left")
    for col in ("key", "checkpoint", "engine uses", "engines"):
        t.add_column(col, overflow="fold")
    sources: list[str] = []
    for k in keys:
        rows: dict[str, list[Mapping[str, Any]]] = {}
        for v in views:
            if k in v["defaults"]:
                rows.setdefault(repr(v["defaults"][k]["engine"]), []).append(v)
        for n, group in enumerate(rows.values()):
            d = group[0]["defaults"][k]
            shown = value(str(d["engine"]))
            diverges = d["filled"] or d["checkpoint"] != d["engine"]
            names = [v["title"] for v in group]
            t.add_row(
                value(k) if n == 0 else "",
                _shown(d["checkpoint"]) if n == 0 else "",
                f"[yellow]{shown}[/]" if diverges else shown,
                value(who(names, titles) if len(rows) > 1 or len(titles) == 1 else EVERY),
            )
        by_source: dict[str, list[str]] = {}
        for v in views:
            if k in v["defaults"]:
                by_source.setdefault(v["defaults"][k]["source"], []).append(v["title"])
        sources += [f"{k} ({who(names, titles)}): {src}" for src, names in by_source.items()]
    out.print(t)
    if verbose:
        out.print(Text("where each value comes from:", style="bold"), soft_wrap=True)
        for entry in sources:
            for line in wrap(one_line(entry), out.width, indent="  ", hanging="      "):
                out.print(Text(line), soft_wrap=True)


def render_engine_tables(summary: Mapping[str, Any], out: Console) -> None:
    """inspect: every layer's causality under each engine that can run the drafter, then the keys the
    engines may fill by default, the checkpoint's value next to the one the engine runs with."""
    views = summary.get("engines") or []
    layers = summary.get("layers")
    if views:
        for line in wrap(
            "engines that run it (newest release of each): " + ", ".join(one_line(v["title"]) for v in views),
            out.width,
            hanging="  ",
        ):
            out.print(Text(line), soft_wrap=True)
    if layers and views:
        _causality(views, layers, out)
    if any(v["defaults"] for v in views):
        _defaults(views, out, bool(getattr(out, "verbose", False)))
