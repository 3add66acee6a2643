"""DSpark, DFlash's sibling family: which engine releases serve DSpark drafters (cited from their registries).

This toolkit does not validate a DSpark checkpoint (its markov and confidence heads, its anchor-first layout):
the verdict says which release serves the family and that nothing further was checked, never "unsupported"
where the engine registers it (DF850).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..findings import Finding
from . import layout_cites as c
from .profile import Cite, Drafter, Profile
from .versions import compare, parse_version

EMITS: frozenset[str] = frozenset({"DF850"})


@dataclass(frozen=True)
class Serves:
    how: str  # how the engine is told to use it
    cite: Cite

    @property
    def first(self) -> str:
        return self.cite.versions[0]


SERVES: dict[str, Serves] = {
    "vllm": Serves("its registry names Qwen3DSparkModel and other DSpark drafters", c.VLLM_DSPARK),
    "sglang": Serves("models/dspark.py registers Qwen3DSparkModel and DSparkDraftModel", c.SGLANG_DSPARK),
    "llama.cpp": Serves(
        "--spec-type draft-dspark, from a DSpark GGUF; this toolkit converts no DSpark drafter", c.LC_DSPARK
    ),
}


def is_dspark(d: Drafter) -> bool:
    archs = d.config.get("architectures")
    named = isinstance(archs, list) and any(isinstance(a, str) and "DSpark" in a for a in archs)
    # the engines route by architecture: a DSpark relabelled as DFlash (DFlashDraftModel) is loaded, and
    # refused, as DFlash, so only a DSpark architecture is served as DSpark
    return d.version is None and named


def _covered(p: Profile, first: str) -> bool:
    """The profile's range reaches the first release whose registry names DSpark: a range that ends before it
    has none; one that spans it holds releases that serve the family (never "unsupported" where one does)."""
    scheme = p.versions.scheme
    if scheme is None:
        return True
    text = "b" + first.split(".")[0] if scheme == "build" else first
    start = parse_version(text, scheme)
    if p.versions.exact is not None:
        return compare(p.versions.exact, start) >= 0
    return p.versions.high is None or compare(p.versions.high, start) > 0


def served(p: Profile, d: Drafter) -> Finding | None:
    """DF850 where this release serves DSpark drafters and the checkpoint is one; None otherwise."""
    s = SERVES.get(p.engine)
    if s is None or not is_dspark(d) or not _covered(p, s.first):
        return None
    details: dict[str, Any] = {"family": "DSpark", "source": str(s.cite)}
    msg = (
        f"{p.title} serves DSpark drafters ({s.how}: {s.cite}). This is a DSpark drafter, DFlash's "
        "sibling family: this toolkit does not validate it further; check it with the engine itself"
    )
    return Finding("DF850", msg, details=details)
