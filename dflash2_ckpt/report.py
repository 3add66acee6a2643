"""Render a Report as rich text or one JSON document. Rendering only: no checks here."""
from __future__ import annotations

import json
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from .causality import ENGINE_LABELS, ENGINES
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
    layers = s.get("layers")
    if layers:
        t = Table(title="in-block causality per engine")
        t.add_column("layer")
        t.add_column("type")
        for e in ENGINES:
            t.add_column(ENGINE_LABELS[e])
        for row in layers:
            cells = ["-" if row["causal"][e] is None else ("causal" if row["causal"][e] else "bidirectional")
                     for e in ENGINES]
            t.add_row(str(row["index"]), str(row["type"]), *cells)
        console.print(t)
    comp = s.get("bytes_by_component")
    if comp:
        t = Table(title="bytes by component")
        t.add_column("component")
        t.add_column("bytes", justify="right")
        for k, v in comp.items():
            t.add_row(k, _fmt_bytes(v))
        console.print(t)
    q = s.get("quantization")
    if q:
        labels = sorted(set(q["modules"].values()))
        console.print(f"quantized: {len(q['modules'])} module(s), {escape(', '.join(labels)) or '-'} "
                      f"({q['library']}); {_fmt_bytes(q['stored_bytes'])} stored for "
                      f"{_fmt_bytes(q['logical_bytes'])} bf16-equivalent, ratio {q['compression_ratio']}")


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
