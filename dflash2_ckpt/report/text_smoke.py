"""Text layout of a smoke report: device, inputs, the drafted paths, timings, findings."""
from __future__ import annotations

from typing import Any

from rich.console import Console

from .text import text_renderer


def smoke_lines(r: Any) -> list[str]:
    lines = [f"smoke forward: {r.checkpoint} ({r.version})",
             f"  device {r.device}, triton {r.triton_mode}; "
             f"embedding from {r.embedding_source.get('embed_tokens')}, "
             f"head from {r.embedding_source.get('lm_head')}"]
    if getattr(r, "threads", None):
        lines.append(f"  torch threads {r.threads['threads']} ({r.threads['reason']})")
    if r.inputs:
        lines.append("  inputs: " + ", ".join(f"{k} {v}" for k, v in r.inputs.items()))
    if getattr(r, "estimate", None):
        e = r.estimate
        lines.append(f"  estimated before the run: {e['peak_bytes'] / 2**20:,.0f} MiB, {e['seconds']:.0f} s "
                     f"(budget {e['budget_bytes'] / 2**20:,.0f} MiB)"
                     + (f"; conv: {e['triton_conv']}" if e.get("triton_conv") else ""))
    for p in r.paths:
        line = f"  input {p['input']}: anchor {p['anchor']} -> greedy {p['greedy']}"
        if "sampled" in p:
            line += f"; sampled {p['sampled']}"
        lines.append(line)
    if r.timings:
        lines.append("  timings: " + ", ".join(f"{k} {v * 1000:.1f} ms" for k, v in r.timings.items()))
    for f in r.findings:
        where = f" [{f.tensor}]" if f.tensor else ""
        lines.append(f"  {f.severity:<7} {f.code} {f.name}{where}: {f.message}")
    lines.append("  result: " + ("passed" if r.passed else "FAILED"))
    return lines


@text_renderer("smoke")
def render_smoke(r: Any, out: Console) -> None:
    for line in smoke_lines(r):
        out.print(line, markup=False)
