"""Acceptance statistics from per-step accept counts. Pure Python: no torch, so reports render anywhere.

A verification step commits `a + 1` tokens: the `a` accepted drafts plus the target's bonus token.
τ (mean acceptance length) = committed tokens / verification steps, the figure SGLang and the model
cards report. vLLM reports the same quantity as "mean acceptance length" = 1 + accepted / drafts, and
its "acceptance rate" = accepted / drafted tokens = (τ − 1) / (B − 1) with B − 1 drafts per step;
its per-position rate = steps that accepted draft j / steps (docs.vllm.ai, features/speculative_decoding/
acceptance_metrics; Prometheus counters spec_decode_num_drafts / _num_draft_tokens / _num_accepted_tokens
/ _num_accepted_tokens_per_pos).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

Z95 = 1.959964
# Student's t, two-sided 95% (the 0.975 quantile), for 1 ... 30 degrees of freedom (standard tables)
_T975 = (
    12.706205,
    4.302653,
    3.182446,
    2.776445,
    2.570582,
    2.446912,
    2.364624,
    2.306004,
    2.262157,
    2.228139,
    2.200985,
    2.178813,
    2.160369,
    2.144787,
    2.131450,
    2.119905,
    2.109816,
    2.100922,
    2.093024,
    2.085963,
    2.079614,
    2.073873,
    2.068658,
    2.063899,
    2.059539,
    2.055529,
    2.051831,
    2.048407,
    2.045230,
    2.042272,
)


def t975(df: int) -> float:
    """The t quantile an interval over `df + 1` samples uses; past 30 the Cornish-Fisher expansion
    in 1/df around the normal quantile (Abramowitz & Stegun 26.7.5), within 1e-5 of the exact value."""
    if df < 1:
        return math.inf
    if df <= len(_T975):
        return _T975[df - 1]
    z = Z95
    return (
        z
        + (z**3 + z) / (4 * df)
        + (5 * z**5 + 16 * z**3 + 3 * z) / (96 * df**2)
        + (3 * z**7 + 19 * z**5 + 17 * z**3 - 15 * z) / (384 * df**3)
    )


@dataclass(frozen=True)
class Interval:
    mean: float
    low: float
    high: float
    df: int = 0  # degrees of freedom of the t quantile used (samples - 1); 0: no interval
    over: str = "steps"  # what the samples are: "steps" of one prompt, or "prompts" as clusters

    @property
    def method(self) -> str:
        return f"t, {self.df} df ({self.over})" if self.df else "none (one sample)"

    def to_json(self) -> dict[str, float | list[float] | str]:
        return {
            "mean": round(self.mean, 4),
            "ci95": [round(self.low, 4), round(self.high, 4)],
            "ci95_method": self.method,
        }


def step_tau(accepted: Sequence[int], block_size: int | None = None) -> Interval:
    """τ over the steps of one prompt; Student-t 95% interval (n - 1 df) of the per-step committed count,
    clipped to the possible range [1, block_size]."""
    n = len(accepted)
    if n == 0:
        return Interval(float("nan"), float("nan"), float("nan"))
    vals = [a + 1 for a in accepted]
    mean = sum(vals) / n
    if n < 2:
        return Interval(mean, mean, mean)
    sd = math.sqrt(sum((v - mean) ** 2 for v in vals) / (n - 1))
    half = t975(n - 1) * sd / math.sqrt(n)
    return Interval(
        mean, max(1.0, mean - half), min(float(block_size or math.inf), mean + half), n - 1, "steps"
    )


def pooled_tau(per_prompt: Sequence[Sequence[int]]) -> Interval:
    """τ over every step of every prompt. Steps of one prompt are correlated, so with several prompts
    the interval is the ratio estimator's with prompts as clusters, with a t quantile of k - 1 degrees of
    freedom for k prompts (z = 1.96 would claim 95% where three prompts give about 80%); with one prompt,
    the step interval."""
    prompts = [p for p in per_prompt if p]
    if len(prompts) < 2:
        return step_tau(prompts[0] if prompts else [])
    committed = [sum(a + 1 for a in p) for p in prompts]
    steps = [len(p) for p in prompts]
    k, total_s = len(prompts), sum(steps)
    tau = sum(committed) / total_s
    mean_s = total_s / k
    resid = [(c - tau * s) / mean_s for c, s in zip(committed, steps)]
    half = t975(k - 1) * math.sqrt(sum(r * r for r in resid) / (k * (k - 1)))
    return Interval(tau, tau - half, tau + half, k - 1, "prompts as clusters")


def pooled_counts(committed: Sequence[int], steps: Sequence[int]) -> Interval:
    """τ from per-prompt totals (committed tokens, verification steps), as an engine's counters give them:
    the same ratio estimator as pooled_tau with prompts as clusters; one prompt gives a point."""
    pairs = [(c, s) for c, s in zip(committed, steps) if s > 0]
    if not pairs:
        return Interval(float("nan"), float("nan"), float("nan"))
    k, total_s = len(pairs), sum(s for _, s in pairs)
    tau = sum(c for c, _ in pairs) / total_s
    if k < 2:
        return Interval(tau, tau, tau)
    mean_s = total_s / k
    resid = [(c - tau * s) / mean_s for c, s in pairs]
    half = Z95 * math.sqrt(sum(r * r for r in resid) / (k * (k - 1)))
    return Interval(tau, tau - half, tau + half)


def per_position(accepted: Sequence[int], drafts: int) -> list[float]:
    """Fraction of steps whose draft j (1-based) was accepted, j = 1 … drafts (vLLM's per-position rate)."""
    n = len(accepted)
    return [sum(1 for a in accepted if a >= j) / n if n else 0.0 for j in range(1, drafts + 1)]


def acceptance_rate(accepted: Sequence[int], drafts: int) -> float:
    """vLLM's acceptance rate: accepted draft tokens / drafted tokens."""
    return sum(accepted) / (len(accepted) * drafts) if accepted and drafts else 0.0
