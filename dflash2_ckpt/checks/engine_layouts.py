"""DF160-DF162, DF631: the shipped layout (architecture name, draft-position layout, draft-token count, the
mask-embedding sidecar) against each
judged engine release, from the same function compat's verdicts use (engines/layouts.py).

Each finding names its engine in details["engines"]; a verify error stops those engines only in compat.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..checkpoint.drafter import drafter_of
from ..engines.layouts import layout_findings
from ..findings import Finding
from .causality import judged_profiles

if TYPE_CHECKING:
    from .context import CheckContext

EMITS: frozenset[str] = frozenset()  # engines/layouts.py builds DF160-DF162


def check(ctx: CheckContext) -> list[Finding]:
    ckpt = ctx.checkpoint
    det = ckpt.detection
    if ckpt.config is None or det is None or not det.is_dflash:
        return []
    found = [f for p in judged_profiles(ctx) for f in layout_findings(p, drafter_of(ckpt))]
    if getattr(det, "family", None) is not None:
        # a family's architecture is not a typo of DFlashDraftModel: which releases load the family is
        # compat's verdict (DF830), not an error of the checkpoint
        found = [f for f in found if f.code != "DF160"]
    return found
