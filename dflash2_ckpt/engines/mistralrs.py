"""mistralrs 0.9.5: its DFlash code (mistralrs-core/src/speculative/dflash.rs) is compiled into the wheel's
extension, and PyPI has no source distribution of this release, so no rule of it can be read: every DFlash
drafter's verdict is `unverified` (DF841), never `loads` by guess."""

from __future__ import annotations

from . import released_exl as r
from .profile import Profile
from .profile import fact as _fact
from .versions import at_least

RANK = 95


PROFILE = Profile(
    engine="mistralrs",
    label="mistralrs",
    versions=at_least("0.9.5", "release"),
    drafts=frozenset(),
    reads=frozenset(),
    version_by="not readable (compiled)",
    causality=None,
    causality_text="not readable (compiled)",
    taps="not readable (compiled)",
    draft_tokens=None,
    verify_default=False,
    sources=(
        _fact(
            "the wheel holds a compiled extension and type stubs, no Rust source",
            r.MISTRALRS_COMPILED,
            r.MISTRALRS_NO_SOURCE,
        ),
    ),
    verified=False,
)

PROFILES = (PROFILE,)

# compat on every fixtures/real config: compiled code, so never `loads` by guess (tests/engines/test_golden.py)
GOLDEN = tuple(
    (name, PROFILE.id, "unverified", ("DF841",))
    for name in (
        "z-lab_Qwen3.8-27B-DFlash2",
        "z-lab_Muse-Glimmer-30B-DFlash2",
        "z-lab_Qwen3-4B-DFlash-b16",
        "speculators-0.9.0_tiny-dflash2",
    )
) + (("deepseek-ai_dspark_qwen3_8b_block7", PROFILE.id, "unsupported", ("DF800",)),)  # not a DFlash drafter
