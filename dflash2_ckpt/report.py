"""Render a Report as rich text or one JSON document. Rendering only: no checks here."""
from __future__ import annotations

import json
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from .verify import Report

_STYLE = {"error": "bold red", "warning": "yellow", "info": "cyan"}


def render_json(report: Report) -> str:
    return json.dumps(report.to_json(), indent=2, default=str)


def _fmt_bytes(n: int) -> str:
    return f"{n:,} B"


def render_findings(report: Report, console: Console) -> None:
    if not report.findings:
        console.print("[green]no findings[/green]")
        return
    table = Table(show_header=True, header_style="bold", expand=False)
    for col in ("code", "severity", "where", "message"):
        table.add_column(col, overflow="fold")
    for f in report.findings:
        where = f.field or f.tensor or f.file or ""
        # names and values come from the checkpoint: a tensor called "[/x]" must print, not parse as markup
        table.add_row(f.code, f"[{_STYLE[f.severity or 'info']}]{f.severity}[/]", escape(where), escape(f.message))
    console.print(table)


def render_summary(report: Report, console: Console) -> None:
    s = report.summary
    console.print(f"[bold]{escape(report.subject)}[/bold]: {s.get('dialect') or '?'} dialect, "
                  f"{escape(s.get('version') or s.get('other_drafter') or 'not DFlash')}, "
                  f"{s.get('tensor_count', 0)} tensors in {len(s.get('files', []))} file(s), "
                  f"{report.bytes_read:,} bytes read")
    geo = s.get("geometry")
    if geo:
        t = Table(title="geometry", show_header=False)
        for k, v in geo.items():
            if v is not None:
                t.add_row(k, str(v))
        console.print(t)
    views = s.get("engines") or []
    layers = s.get("layers")
    if layers and views:
        t = Table(title="in-block causality per engine")
        t.add_column("layer")
        t.add_column("type")
        for v in views:
            t.add_column(escape(v["title"]))
        for row in layers:
            cells = ["-" if row["causal"].get(v["engine"]) is None else
                     ("causal" if row["causal"][v["engine"]] else "bidirectional") for v in views]
            t.add_row(str(row["index"]), str(row["type"]), *cells)
        console.print(t)
    filled = [(v, k, d) for v in views for k, d in v["defaults"].items()]
    if filled:
        t = Table(title="keys engines may fill by default: the checkpoint's value vs what the engine runs with")
        for col in ("engine", "key", "checkpoint", "engine uses", "source"):
            t.add_column(col, overflow="fold")
        for v, k, d in filled:
            mark = "[yellow]" if d["filled"] or d["checkpoint"] != d["engine"] else ""
            t.add_row(escape(v["title"]), k, "(absent)" if d["checkpoint"] is None else escape(str(d["checkpoint"])),
                      f"{mark}{escape(str(d['engine']))}{'[/]' if mark else ''}", escape(d["source"]))
        console.print(t)
    comp = s.get("bytes_by_component")
    if comp:
        t = Table(title="bytes by component")
        t.add_column("component")
        t.add_column("bytes", justify="right")
        for k, v in comp.items():
            t.add_row(k, _fmt_bytes(v))
        console.print(t)


def render_text(report: Report, console: Console, *, summary: bool = False) -> None:
    if summary:
        render_summary(report, console)
    else:
        s = report.summary
        console.print(f"[bold]{escape(report.subject)}[/bold]: {s.get('dialect') or '?'} "
                      f"{escape(s.get('version') or s.get('other_drafter') or 'not DFlash')}, "
                      f"{s.get('tensor_count', 0)} tensors, {report.bytes_read:,} bytes read")
    render_findings(report, console)
    counts: dict[str, Any] = report.to_json()["counts"]
    verdict = "[red]FAILED[/red]" if report.failed() else "[green]passed[/green]"
    console.print(f"{verdict}: {counts['error']} error(s), {counts['warning']} warning(s), {counts['info']} info")
