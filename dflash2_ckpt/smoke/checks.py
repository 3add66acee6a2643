"""Checks on the smoke forward's outputs, each returning findings (DF703-DF710)."""

from __future__ import annotations

from collections.abc import Mapping

import torch

from ..findings import Finding

EMITS: frozenset[str] = frozenset({"DF703", "DF704", "DF705", "DF706", "DF707", "DF708", "DF709", "DF710"})

# float tolerances: f32 throughout, so a kernel or an equivalent path may differ by reassociation only
REL_TOL = 1e-4
Q_SUM_TOL = 1e-4


def rel_change(a: torch.Tensor, b: torch.Tensor) -> float:
    scale = float(a.abs().max()) if a.numel() else 0.0
    return float((a - b).abs().max()) / max(scale, 1e-30) if a.numel() else 0.0


def slot_fraction(a: torch.Tensor, b: torch.Tensor) -> float:
    return float((a != b).float().mean()) if a.numel() else 0.0


def nonfinite(stages: Mapping[str, torch.Tensor]) -> list[Finding]:
    """One finding, at the first stage (in forward order) that holds a NaN or Inf."""
    for name, t in stages.items():
        if t.is_floating_point() and not bool(torch.isfinite(t).all()):
            bad = int((~torch.isfinite(t)).sum())
            return [
                Finding(
                    "DF703",
                    f"stage {name} holds {bad} non-finite values of {t.numel()}; "
                    "everything after it is garbage — look for overflowing weights (BF16 → F32 "
                    "is exact, so the tensors themselves are suspect)",
                    details={"stage": name, "count": bad, "numel": t.numel()},
                )
            ]
    return []


def in_vocab(what: str, tokens: torch.Tensor, vocab: int) -> list[Finding]:
    bad = tokens[(tokens < 0) | (tokens >= vocab)]
    if bad.numel():
        return [
            Finding(
                "DF704",
                f"{what} holds token ids outside [0, {vocab}): {bad.tolist()[:8]}",
                details={"what": what, "ids": bad.tolist()[:32], "vocab_size": vocab},
            )
        ]
    return []


def q_normalised(q: torch.Tensor) -> list[Finding]:
    sums = q.sum(-1)
    err = float((sums - 1).abs().max()) if sums.numel() else 0.0
    if err > Q_SUM_TOL or bool((q < 0).any()):
        return [
            Finding(
                "DF709",
                f"sampled proposal rows sum to 1 ± {err:.3g} (tolerance {Q_SUM_TOL}); the lossless "
                "verify would accept with the wrong probabilities",
                details={"max_error": err},
            )
        ]
    return []


def kernel_match(what: str, ref: torch.Tensor, got: torch.Tensor) -> list[Finding]:
    err = rel_change(ref, got)
    if err > REL_TOL or ref.shape != got.shape:
        return [
            Finding(
                "DF708",
                f"{what}: Triton differs from the torch reference by {err:.3g} (relative, "
                f"tolerance {REL_TOL})",
                details={"what": what, "rel_error": err, "tolerance": REL_TOL},
            )
        ]
    return []


def walk_match(
    what: str,
    ref_tokens: torch.Tensor,
    got_tokens: torch.Tensor,
    divergence: tuple[int, int, float] | None,
    score_scale: float,
) -> list[Finding]:
    """Paths must be equal; a split at a near-tie (gap within float rounding) is not a kernel bug."""
    if torch.equal(ref_tokens.cpu(), got_tokens.cpu()):
        return []
    details: dict[str, object] = {"what": what, "torch": ref_tokens.tolist(), "triton": got_tokens.tolist()}
    if divergence is not None:
        qi, j, gap = divergence
        details.update(request=qi, slot=j, score_gap=gap)
        if gap <= REL_TOL * max(score_scale, 1.0):
            return []
    return [
        Finding(
            "DF708",
            f"{what}: the Triton walk drafted a different path from the torch walk on the same scores",
            details=details,
        )
    ]


def deterministic(what: str, first: torch.Tensor, second: torch.Tensor) -> list[Finding]:
    if torch.equal(first.cpu(), second.cpu()):
        return []
    return [
        Finding(
            "DF710",
            f"{what}: two runs with the same seed drafted different tokens "
            f"({slot_fraction(first, second):.0%} of slots differ)",
            details={"what": what, "first": first.tolist(), "second": second.tolist()},
        )
    ]


def inert_conv(module: str, at_identity: bool, rel: float, slots: float) -> list[Finding]:
    """DF705 only when the weights make the module inert; a live module is measured (influence.py)."""
    if not at_identity:
        return []
    return [
        Finding(
            "DF705",
            f"{module} is inert: its weights are the identity init (base tap 0 = 1, other "
            "taps 0, projection 0); the drafter drafts like DFlash v1 there — was the conv ever trained "
            "or loaded?",
            tensor=module,
            details={"relative_change": rel, "slots_changed": slots, "identity_init": True},
        )
    ]


def inert_selector(reason: str | None) -> list[Finding]:
    """DF706 only when the weights make the selector inert (influence.selector_inert_reason)."""
    if reason is None:
        return []
    return [
        Finding(
            "DF706",
            f"the candidate selector is inert: {reason}, so every path equals the "
            "independent per-slot argmax (DFlash v1 behaviour); check that the codebooks were "
            "trained and loaded",
            tensor="candidate_selector",
            details={"reason": reason},
        )
    ]


def identity_equivalence(rel: float) -> list[Finding]:
    if rel <= REL_TOL:
        return []
    return [
        Finding(
            "DF707",
            f"with every conv at identity the v2 forward differs from the v1 forward of the "
            f"same trunk by {rel:.3g} (relative); the conv wiring is wrong",
            details={"relative_change": rel, "tolerance": REL_TOL},
        )
    ]
