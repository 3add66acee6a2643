"""Text layout of a diff: the tensors that are not bit-identical, with their figures, and the verdict."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.table import Table

from .safe_markup import value
from .text import render_findings, text_renderer

_STYLE = {
    "equal": "green",
    "quantization-noise": "cyan",
    "different": "bold red",
    "missing": "bold red",
    "extra": "yellow",
}


@text_renderer("diff")
def render_diff(result: Any, out: Console) -> None:
    table = Table(show_header=True, header_style="bold")
    for col in ("tensor", "verdict", "scheme", "cosine", "max abs err", "rel RMS", "predicted"):
        table.add_column(col, overflow="fold")
    for f in result.figures:
        if f.verdict == "equal":
            continue
        num = f.verdict not in ("missing", "extra")
        table.add_row(
            value(f.name),
            f"[{_STYLE[f.verdict]}]{f.verdict}[/]",
            value(f.scheme or "-"),
            f"{f.cosine:.6f}" if num else "",
            f"{f.max_abs:.3g}" if num else "",
            f"{f.rel_rms:.3g}" if num else "",
            f"{f.predicted_rel_rms:.3g}" if num else "",
        )
    if table.rows:
        out.print(table)
    errors = [f for f in result.findings if f.severity == "error"]
    if errors:
        render_findings(type("Errors", (), {"findings": errors})(), out)
    counts = ", ".join(f"{v} {k}" for k, v in sorted(result.counts.items()))
    verdict = "[red]FAILED[/red]" if result.failed() else "[green]passed[/green]"
    out.print(
        f"{verdict}: {value(result.derived)} vs {value(result.reference)}: {counts} "
        f"({result.seconds:.2f} s{_threads(result)})"
    )


def _threads(result: Any) -> str:
    t = getattr(result, "threads", None) or {}
    return f", {t['threads']} torch thread(s): {value(t['reason'])}" if t else ""
