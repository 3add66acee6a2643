"""The accept run's judgements (DF75x): lossless, drafting at all, as published, and its caveats."""

from __future__ import annotations

import re
from collections.abc import Sequence

from ..errors import ConfigError
from ..findings import Finding
from . import stats

EMITS: frozenset[str] = frozenset({"DF750", "DF751", "DF752", "DF753", "DF754", "DF755"})

# chosen from bench/accept_failures.py on the recall pair (bench/RESULTS.md; 1 recall + 3 rule prompts a
# seed, 32 new tokens): over 48 seeds a random fc drafts at most 2.33 (47 of them at most 1.28), v2 read as
# v1 at most 1.15, the trained drafter 8.0 on every seed (B = 8); 2.6 clears the worst broken seed and flags
# no drafter accepting 23% or more
NOT_DRAFTING = 2.6
# ... judged over the opening of every output: the steps a run with --max-new-tokens OPENING_TOKENS makes
# (greedy decoding is deterministic, so a longer run makes the same steps first). A wiring fault (fc, v2 as v1,
# taps) costs τ from the first step; a drafter that drafts less as outputs outgrow its training rows (the
# bundled pairs: τ 6.11 / 8.00 at 32 tokens, 2.38 / 2.39 at 256) is drafting, and the overall τ shows it
OPENING_TOKENS = 32
DEFAULT_REL_TOL = 0.05
MIN_STEPS = 30
# ordered by how often each is the cause in the field (docs/engines.md: engines, quantized drafters;
# docs/contract.md#in-block-causality, #telling-drafters-apart)
LIKELY_CAUSES = (
    "fc dropped or left at random init (e.g. a quantized fc.weight_packed the engine did not load)",
    "v2 weights read as v1 (conv and selector dropped)",
    "wrong tap layers (target_layer_ids off by one, or guessed defaults)",
    "wrong attention causality inside the block (trained bidirectional, run causal)",
)


def parse_expect(text: str | float | tuple[float, float] | None) -> tuple[float, float] | None:
    """ "4.8±0.3", "4.8+-0.3", "4.8" (tolerance 5% of the figure) -> (tau, tolerance)."""
    if text is None:
        return None
    if isinstance(text, tuple):
        return float(text[0]), float(text[1])
    if isinstance(text, (int, float)):
        return float(text), abs(float(text)) * DEFAULT_REL_TOL
    m = re.fullmatch(r"\s*(\d+(?:\.\d*)?)\s*(?:(?:±|\+-|\+/-)\s*(\d+(?:\.\d*)?)\s*(%?))?\s*", text)
    if not m:
        raise ConfigError(
            f"--expect {text!r} is not TAU or TAU±TOL (e.g. 4.8±0.3, 4.8+-5%)",
            field="expect",
            hint="give the published mean acceptance length, optionally ±tolerance",
        )
    tau = float(m.group(1))
    if m.group(2) is None:
        return tau, tau * DEFAULT_REL_TOL
    tol = float(m.group(2))
    return tau, tau * tol / 100 if m.group(3) else tol


def first_difference(reference: Sequence[int], speculative: Sequence[int]) -> int | None:
    if list(reference) == list(speculative):
        return None
    return next(
        (i for i, (a, b) in enumerate(zip(reference, speculative)) if a != b),
        min(len(reference), len(speculative)),
    )


def lossless(
    label: str,
    reference: Sequence[int],
    speculative: Sequence[int],
    *,
    gap: float | None = None,
    tolerance: float = 0.0,
) -> list[Finding]:
    """gap: |logit(reference token) - logit(speculative token)| of the target at the first difference.
    Within `tolerance` the two forwards (a block over the cache vs one token) merely rounded a tie
    differently: a warning, and the texts cannot be compared past it. Otherwise the loop is wrong."""
    at = first_difference(reference, speculative)
    if at is None:
        return []
    if gap is not None and gap <= tolerance:
        return [
            Finding(
                "DF754",
                f"{label}: token {at} left the target's greedy text at a near-tie (logit gap "
                f"{gap:.2g} <= {tolerance:g}): float rounding of the block forward, not a loop error; "
                "the rest of this prompt's text is not compared",
                details={"prompt": label, "index": at, "gap": gap, "tolerance": tolerance},
            )
        ]
    return [
        Finding(
            "DF750",
            f"{label}: token {at} differs from the target's own greedy decoding "
            f"({speculative[at] if at < len(speculative) else 'end'} committed, "
            f"{reference[at] if at < len(reference) else 'end'} expected): the verify loop or the "
            "drafter's context is wrong, not the drafter's quality",
            details={
                "prompt": label,
                "index": at,
                "reference_len": len(reference),
                "speculative_len": len(speculative),
                "gap": gap,
            },
        )
    ]


def opening(accepted: Sequence[int], tokens: int = OPENING_TOKENS) -> list[int]:
    """The steps of one output that a run to `tokens` new tokens makes: those that start before its
    `tokens`-th token (the prefill commits the first)."""
    out, committed = [], 1
    for a in accepted:
        if committed >= tokens:
            break
        out.append(a)
        committed += a + 1
    return out


def opening_tau(per_prompt: Sequence[Sequence[int]], tokens: int = OPENING_TOKENS) -> stats.Interval:
    """τ over the opening of every prompt's output (accepted drafts per step, per prompt)."""
    return stats.pooled_tau([opening(p, tokens) for p in per_prompt])


def drafting(
    tau_opening: float, block_size: int, *, tau: float | None = None, tokens: int = OPENING_TOKENS
) -> list[Finding]:
    """tau_opening: τ over the first `tokens` new tokens of every output; tau: the whole run's, reported."""
    if not tau_opening < NOT_DRAFTING:
        return []
    causes = "; ".join(f"({i}) {c}" for i, c in enumerate(LIKELY_CAUSES, 1))
    overall = "" if tau is None else f" (over the whole output {tau:.2f})"
    return [
        Finding(
            "DF751",
            f"mean acceptance length {tau_opening:.2f} < {NOT_DRAFTING} over the first {tokens} "
            f"new tokens of every output{overall} with blocks of {block_size}: the drafter is not drafting. "
            f"Likely causes, most frequent first: {causes}",
            details={
                "tau_opening": round(tau_opening, 4),
                "opening_tokens": tokens,
                **({} if tau is None else {"tau": round(tau, 4)}),
                "threshold": NOT_DRAFTING,
                "likely_causes": list(LIKELY_CAUSES),
            },
        )
    ]


def judged(
    tau_opening: float, tau: float, block_size: int, max_new_tokens: int, expect: tuple[float, float] | None
) -> list[Finding]:
    """DF751 over the opening (and the whole output's τ beside it when the run is longer), DF752 on the whole."""
    longer = max_new_tokens > OPENING_TOKENS
    return drafting(
        tau_opening, block_size, tau=tau if longer else None, tokens=min(max_new_tokens, OPENING_TOKENS)
    ) + expected(tau, expect)


PARITY_FLOOR = 0.85  # tau_engine / tau_reference below this: the engine drafts worse than the checkpoint


def committed_tau(generated: Sequence[int], steps: Sequence[int]) -> float:
    """The reference loop's tau counted as an engine counts it: each prompt's output (cropped to
    max_new_tokens) minus the prefill's token, per verification step. The loop's own tau counts a prompt's
    last step whole, which an engine crops, so comparing with it biases the ratio down on short runs."""
    total = sum(steps)
    return (sum(g - 1 for g in generated) / total) if total else 0.0


def parity(
    engine: str, tau_engine: float, tau_reference: float, *, advice: str | None = None
) -> list[Finding]:
    ratio = tau_engine / tau_reference if tau_reference else 0.0
    if ratio >= PARITY_FLOOR:
        return []
    return [
        Finding(
            "DF755",
            f"{engine} drafts at tau {tau_engine:.2f}, the reference loop at {tau_reference:.2f} on "
            f"the same prompts (ratio {ratio:.2f} < {PARITY_FLOOR}): the engine loses acceptance the "
            "checkpoint has; "
            + (
                advice
                or "check the GGUF's causality, taps and quantization "
                f"(`dflash2-ckpt compat DRAFTER.gguf --engine {engine}`)"
            ),
            details={
                "tau_engine": round(tau_engine, 4),
                "tau_reference": round(tau_reference, 4),
                "ratio": round(ratio, 4),
                "floor": PARITY_FLOOR,
            },
        )
    ]


def expected(tau: float, expect: tuple[float, float] | None) -> list[Finding]:
    if expect is None or abs(tau - expect[0]) <= expect[1]:
        return []
    return [
        Finding(
            "DF752",
            f"mean acceptance length {tau:.2f} is outside the expected {expect[0]:g} ± {expect[1]:g}",
            details={"tau": round(tau, 4), "expected": expect[0], "tolerance": expect[1]},
        )
    ]


def caveats(taps: Sequence[int], target_layers: int, steps: int) -> list[Finding]:
    out = []
    if target_layers - 1 in taps:
        out.append(
            Finding(
                "DF753",
                f"tap {target_layers - 1} is the target's last layer: transformers returns it "
                "after the final norm, which engines that tap the raw layer output do not",
                field="dflash_config.target_layer_ids",
                details={"tap": target_layers - 1},
            )
        )
    if steps < MIN_STEPS:
        out.append(
            Finding(
                "DF753",
                f"only {steps} verification steps: the confidence interval is wide; "
                "give more prompts or --max-new-tokens",
                details={"steps": steps},
            )
        )
    return out
