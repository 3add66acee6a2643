"""How much the DFlash2 modules change the drafts, beyond the handful of smoke slots.

A module is called inert only when its weights make it so (checks.inert_conv / inert_selector). A live
module is measured instead: the selector over hundreds of sampled contexts (cheap: a context is a
candidate set per slot plus an anchor; the walk is K x K x R per slot), reported as the fraction of
slots whose drafted token differs from the independent per-slot argmax; the convs from the smoke
ablation itself. Both as info (DF714 / DF715): a small fraction is a property of the weights, not a
defect.
"""

from __future__ import annotations

from collections.abc import Mapping

import torch

from ..findings import Finding
from .walk import edge_scores, walk

EMITS: frozenset[str] = frozenset({"DF714", "DF715"})
CONTEXTS = 512


def selector_inert_reason(pred: torch.Tensor, succ: torch.Tensor, proj: torch.Tensor) -> str | None:
    """Why the weights alone keep the selector from ever changing a pick, or None when they do not.

    Pair score = A[pred] . z . B[cand]: zero when A, B or the projection is zero, and the same for every
    candidate when all successor rows are equal. (Equal predecessor rows still re-rank candidates per slot,
    so they do not make it inert.)"""
    if not bool(proj.any()):
        return "its hidden projection is zero"
    if not bool(pred.any()):
        return "its predecessor codebook is zero"
    if not bool(succ.any()):
        return "its successor codebook is zero"
    if bool((succ == succ[:1]).all()):
        return "every successor codebook row is the same, so each candidate gets the same pair score"
    return None


def selector_influence(
    ids: torch.Tensor,
    u: torch.Tensor,
    z: torch.Tensor,
    pred: torch.Tensor,
    succ: torch.Tensor,
    vocab: int,
    seed: int,
    contexts: int = CONTEXTS,
) -> float:
    """Fraction of slots where the walk's token differs from the independent argmax, over `contexts` sampled
    contexts: each slot's (candidates, scores, projection) drawn from the smoke's own slots, anchors drawn
    from the whole vocabulary."""
    q, n, _ = ids.shape
    gen = torch.Generator(device="cpu").manual_seed(seed)
    pick = torch.randint(0, q * n, (contexts, n), generator=gen).to(ids.device)
    anchors = torch.randint(0, vocab, (contexts,), generator=gen).to(ids.device)
    flat_ids, flat_u, flat_z = ids.reshape(q * n, -1), u.reshape(q * n, -1), z.reshape(q * n, -1)
    s_ids, s_u, s_z = flat_ids[pick], flat_u[pick], flat_z[pick]
    tokens = walk(edge_scores(s_u, s_ids, s_z, pred, succ, anchors), s_ids).tokens
    independent = s_ids.gather(-1, s_u.argmax(-1, keepdim=True)).squeeze(-1)
    return float((tokens != independent).float().mean())


def selector_finding(fraction: float, contexts: int, slots: int) -> list[Finding]:
    return [
        Finding(
            "DF714",
            f"the candidate selector changed {fraction:.1%} of drafted slots against the "
            f"independent per-slot argmax, over {contexts} sampled contexts ({contexts * slots} slots)",
            tensor="candidate_selector",
            details={"slots_changed": fraction, "contexts": contexts, "slots": contexts * slots},
        )
    ]


def conv_finding(
    convs: Mapping[str, Mapping[str, float | bool]], all_slots: float, slots: int
) -> list[Finding]:
    live = {k: v for k, v in convs.items() if not v["identity_init"]}
    if not live:
        return []
    rel = [float(v["relative_change"]) for v in live.values()]
    changed = [float(v["slots_changed"]) for v in live.values()]
    return [
        Finding(
            "DF715",
            f"removing one trained conv moves the final hidden state by {min(rel):.2g}-"
            f"{max(rel):.2g} (relative) and changes {min(changed):.0%}-{max(changed):.0%} of the {slots} "
            f"smoke slots; removing all {len(convs)} changes {all_slots:.0%}",
            details={
                "modules": len(live),
                "relative_change": [min(rel), max(rel)],
                "slots_changed": [min(changed), max(changed)],
                "all_convs_slots_changed": all_slots,
                "slots": slots,
            },
        )
    ]
