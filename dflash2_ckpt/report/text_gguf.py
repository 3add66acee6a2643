"""Text layout of a GGUF conversion (either direction): what was written, what was exact, what was not."""

from __future__ import annotations

from typing import Any

from rich.console import Console

from .safe_markup import value
from .text import render_findings, text_renderer
from .text_meaning import render_meaning


@text_renderer("convert-gguf")
def render_convert_gguf(r: Any, out: Console) -> None:
    doc = r.to_json()
    head = "plan (dry run, nothing written)" if doc.get("dry_run") else "converted"
    out.print(
        f"[bold]{head}[/]: {value(doc['src'])} ({doc['from']} {doc['version']}) -> "
        f"{value(doc['dst'])} ({doc['to']})"
    )
    exact = doc.get("exact_tensors", 0)
    other = doc.get("converted_tensors", doc.get("dequantized_tensors", 0))
    how = "converted to --outtype" if doc["to"] == "gguf" else "dequantized to F32"
    restored = doc.get("restored_tensors", 0)
    again = f", {restored} stored in their source dtype again" if restored else ""
    out.print(f"tensors: {exact} copied bit for bit, {other} {how}{again}")
    if doc["to"] == "gguf":
        out.print(f"  {doc['bytes_written']:,} B of tensor data, {doc['metadata_keys']} metadata keys")
    render_meaning(doc.get("meaning"), out)
    for note in doc.get("notes", []):
        out.print(f"note: {value(note)}")
    if r.findings:
        render_findings(r, out)
    errors = sum(f.severity == "error" for f in r.findings)
    if doc.get("written") and errors:
        out.print(
            f"[red]FAILED[/]: written, but the check of what was written found {errors} error(s) "
            f"above; `dflash2-ckpt verify {value(doc['dst'])}` reports them too"
        )
    elif doc.get("written"):
        out.print(
            f"[green]verified[/]: {doc['tensors_verified']} tensors written and checked "
            f"against the plan ({doc['seconds']:.2f} s)"
        )
