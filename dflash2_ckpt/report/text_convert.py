"""Text layout of a conversion report: the config key diff, the tensor plan, what was written and checked."""

from __future__ import annotations

import json
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from .fit import wrap
from .safe import one_line
from .safe_markup import value
from .text import text_renderer
from .text_meaning import render_meaning


def _short(value: Any, width: int = 60) -> str:
    s = json.dumps(value, default=str)
    return s if len(s) <= width else s[: width - 3] + "..."


def _level_move(c: Any) -> bool:
    tl = "transformer_layer_config."
    return (
        c.action == "moved"
        and bool(c.src and c.dst)
        and (
            (c.src.startswith(tl) and c.dst == c.src[len(tl) :])
            or (c.dst.startswith(tl) and c.src == c.dst[len(tl) :])
        )
    )


def _say(text: str, console: Console) -> None:
    """A line of prose within the console's width, continued two columns in (plain text, never markup)."""
    for line in wrap(text, console.width, hanging="  "):
        console.print(Text(line), soft_wrap=True)


def _key(src: str, dst: str) -> str:
    """A key's move: the old name, then `-> new` on a line of its own (one name when it keeps it)."""
    if not src or not dst or src == dst:
        return src or f"-> {dst}"
    return f"{src}\n-> {dst}"


@text_renderer("convert")
def render_convert(r: Any, console: Console) -> None:
    head = "plan (dry run, nothing written)" if r.dry_run else "converted"
    for line in wrap(
        one_line(f"{head}: {r.src} ({r.from_dialect} {r.version}) -> {r.dst} ({r.to})"),
        console.width,
        hanging="  ",
    ):
        console.print(Text(line, style="bold"), soft_wrap=True)
    table = Table(title="config keys", show_header=True, header_style="bold")
    # one key column, `from` over `-> to`: the names get the width two columns would split
    table.add_column("action")
    table.add_column("key: from -> to", overflow="fold")
    for col in ("value", "reason"):
        table.add_column(col, overflow="fold")
    level = [c for c in r.config_changes if _level_move(c)]
    if level:
        keys = ", ".join((c.dst or "").split(".")[-1] for c in level)
        src, dst = (
            ("transformer_layer_config.*", "*") if r.to == "nested" else ("*", "transformer_layer_config.*")
        )
        table.add_row(
            "moved",
            _key(src, dst),
            value(f"{len(level)} keys: {keys}"),
            "the transformer config changes level",
        )
    for c in r.config_changes:
        if _level_move(c):
            continue
        shown = f"{_short(c.old)} -> {_short(c.value)}" if c.action == "changed" else _short(c.value)
        table.add_row(c.action, _key(value(c.src or ""), value(c.dst or "")), value(shown), value(c.reason))
    console.print(table)
    moved = [t for t in r.tensors if t.action != "copy"]
    if moved:
        tt = Table(title="tensors renamed or dropped", show_header=True, header_style="bold")
        for col in ("action", "tensor", "to", "bytes", "reason"):
            tt.add_column(col, overflow="fold")
        for t in moved:
            tt.add_row(t.action, value(t.name), value(t.dst_name or ""), f"{t.nbytes:,}", value(t.reason))
        console.print(tt)
    render_meaning(r.extra.get("meaning"), console)
    c = r.counts()
    would = "would be " if r.dry_run else ""  # a dry run says what a real run would do, never that it did
    _say(
        f"tensors: {c['copy']} {would}copied bit for bit, {c['rename']} {would}renamed, {c['drop']} "
        f"{would}dropped; {r.bytes_copied:,} B {would}written, {r.bytes_dropped:,} B {would}dropped",
        console,
    )
    for name, n, size in r.shards:
        console.print(f"  {'would write ' if r.dry_run else ''}{value(name)}: {n} tensors, {size:,} B")
    for f in r.files_copied:
        console.print(f"  {'would copy' if r.dry_run else 'copied'} {value(f)}")
    for f, why in r.files_skipped:
        console.print(f"  {'would skip' if r.dry_run else 'skipped'} {value(f)}: {value(why)}")
    for note in (*r.notes, *r.cleaned):
        _say(one_line(f"note: {note}"), console)
    if r.dry_run and r.extra.get("dst_exists"):
        console.print(f"[yellow]{value(r.dst)} exists; a real run needs --force[/]")
    if r.written:
        console.print(
            f"[green]verified[/]: {r.tensors_verified} tensors written and checked against the "
            f"plan; verify: {sum(f.severity == 'error' for f in r.verify_findings)} error(s) "
            f"({r.seconds:.2f} s)"
        )
