"""Text layout of an accept report: the pair, τ with its interval, per-position rates, speed, prompts."""

from __future__ import annotations

from typing import Any

from ..accept.checks import NOT_DRAFTING
from .safe import one_line
from .text_run import closing_lines, run_renderer, threads_line


def accept_lines(r: Any) -> list[str]:
    t, fw = r.tau, r.target_forwards
    lines = [
        f"accept: {one_line(str(r.drafter))} drafting for {one_line(str(r.target))}",
        f"  device {r.device}, kernels {r.kernels}, blocks of {r.block_size} ({r.block_size - 1} drafted), "
        f"up to {r.max_new_tokens} new tokens, {len(r.prompts)} prompts ({r.prompts_source})",
        f"  mean acceptance length tau {t.mean:.3f}  (95% CI {t.low:.3f} - {t.high:.3f}, {t.method}; "
        "committed tokens per target verification step, bonus included)",
        *(
            [
                f"  first {r.tau_opening_tokens} new tokens of every output: tau {r.tau_opening.mean:.3f} "
                f"(DF751 below {NOT_DRAFTING})"
            ]
            if getattr(r, "tau_opening", None) is not None
            else []
        ),
        f"  acceptance rate (vLLM) {r.acceptance_rate:.3f}; per draft position: "
        + (" ".join(f"{x:.2f}" for x in r.per_position) or "not reported by the engine"),
        f"  tokens/s {r.tokens_per_s:.1f} with drafting, {r.baseline_tokens_per_s:.1f} without "
        f"(x{r.speedup:.2f}); target forwards {fw['speculative']} instead of {fw['baseline']} "
        f"(saved {fw['saved']})",
    ]
    for j, x in enumerate(r.per_position):  # the chart, in the terminal
        lines.append(f"    draft {j + 1:>2} {'█' * round(max(0.0, min(1.0, x)) * 40):<40} {x:.2f}")
    lines[2:2] = threads_line(
        r, f", {r.batch} prompts per target forward" if getattr(r, "batch", 1) > 1 else ""
    )
    if r.engine != "reference":
        d = r.engine_details
        summary = d.get("summary") or (
            f"{d.get('draft_n_accepted', 0)} of {d.get('draft_n', 0)} drafted tokens "
            f"accepted, --spec-draft-n-max {d.get('spec_draft_n_max')}"
        )
        lines.insert(1, f"  engine {r.engine} (build {r.build}): {summary}")
        if "parity" in d:
            pr = d["parity"]
            committed = (
                f" (committed within the output as the engine counts: {pr['tau_reference_committed']:.3f})"
                if "tau_reference_committed" in pr
                else ""
            )
            lines.append(
                f"  parity: tau_engine {pr['tau_engine']:.3f}, tau_reference {pr['tau_reference']:.3f}{committed}, "
                f"ratio {pr['ratio']:.3f} (floor {pr['floor']})"
                + (
                    f"; {pr['steps_same_accepted']} of {pr['steps_engine']} steps accepted as many drafts "
                    f"in both ({pr['steps_reference']} reference steps)"
                    if "steps_engine" in pr
                    else ""
                )
            )
    if r.expect is not None:
        lines.append(f"  expected tau {r.expect[0]:g} ± {r.expect[1]:g}")
    for p in r.prompts:
        lines.append(
            f"  {one_line(p.label)}: tau {p.tau.mean:.2f} [{p.tau.low:.2f}, {p.tau.high:.2f}] over "
            f"{p.steps} "
            f"steps, {p.generated} tokens, {'lossless' if p.lossless else 'NOT LOSSLESS'}"
        )
    return lines + closing_lines(r)


run_renderer("accept", accept_lines)
