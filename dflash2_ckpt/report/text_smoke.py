"""Text layout of a smoke report: device, inputs, the drafted paths, timings, findings."""

from __future__ import annotations

from typing import Any

from .text_run import closing_lines, run_renderer, threads_line


def smoke_lines(r: Any) -> list[str]:
    lines = [
        f"smoke forward: {r.checkpoint} ({r.version})",
        f"  device {r.device}, triton {r.triton_mode}; "
        f"embedding from {r.embedding_source.get('embed_tokens')}, "
        f"head from {r.embedding_source.get('lm_head')}",
    ]
    lines += threads_line(r)
    if r.inputs:
        lines.append("  inputs: " + ", ".join(f"{k} {v}" for k, v in r.inputs.items()))
    if getattr(r, "estimate", None):
        e = r.estimate
        lines.append(
            f"  estimated before the run: {e['peak_bytes'] / 2**20:,.0f} MiB, {e['seconds']:.0f} s "
            f"(budget {e['budget_bytes'] / 2**20:,.0f} MiB)"
            + (f"; conv: {e['triton_conv']}" if e.get("triton_conv") else "")
        )
    for p in r.paths:
        line = f"  input {p['input']}: anchor {p['anchor']} -> greedy {p['greedy']}"
        if "sampled" in p:
            line += f"; sampled {p['sampled']}"
        lines.append(line)
    if r.timings:
        lines.append("  timings: " + ", ".join(f"{k} {v * 1000:.1f} ms" for k, v in r.timings.items()))
    return lines + closing_lines(r)


run_renderer("smoke", smoke_lines)
