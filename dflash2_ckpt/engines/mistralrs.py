"""mistralrs 0.9.5: its DFlash code (mistralrs-core/src/speculative/dflash.rs) is compiled into the wheel's
extension, and PyPI has no source distribution of this release, so no rule of it can be read: every DFlash
drafter's verdict is `unverified` (DF841), never `loads` by guess."""
from __future__ import annotations

from . import released_exl as r
from .profile import Cite, Fact, Profile
from .versions import exactly


def _fact(text: str, *cites: Cite) -> Fact:
    return Fact(text, "; ".join(str(c) for c in cites), cites)


PROFILE = Profile(
    engine="mistralrs", label="mistralrs", versions=exactly("0.9.5", "release"),
    drafts=frozenset(), reads=frozenset(),
    version_by="not readable (compiled)",
    causality=None, causality_text="not readable (compiled)", taps="not readable (compiled)",
    draft_tokens=None, verify_default=False,
    sources=(_fact("the wheel holds a compiled extension and type stubs, no Rust source", r.MISTRALRS_COMPILED,
                   r.MISTRALRS_NO_SOURCE),),
    verified=False,
)

PROFILES = (PROFILE,)
