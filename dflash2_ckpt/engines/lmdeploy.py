"""lmdeploy 0.18.0 (PyTorch engine), as its released wheel reads a drafter (released_exl.py cites each fact):
DFlash v1 only, nested dialect; causality from dflash_config.causal (is_causal is never read)."""

from __future__ import annotations

from ..formats.spec import DraftSpec
from . import released_exl as r
from .profile import Causality, Drafter, Profile, Refusal
from .profile import fact as _fact
from .versions import at_least

RANK = 90


def causality(spec: DraftSpec) -> Causality | None:
    """dflash_config.causal, else a top-level causal, else sliding layers causal; is_causal is not read."""
    if spec.dialect != "nested":
        return None
    top = spec.transformer_extra.get("causal")
    value = (
        spec.causality.dflash_causal
        if spec.causality.dflash_causal is not None
        else (top if isinstance(top, bool) else None)
    )
    if value is not None:
        return (value,) * spec.num_hidden_layers
    return tuple(t == "sliding_attention" for t in spec.layer_types)


def _layer_types(d: Drafter) -> str | None:
    return (
        None
        if isinstance(d.config.get("layer_types"), list)
        else "DFlash V1 requires an explicit layer_types list"
    )


def _order(d: Drafter) -> str | None:
    ids = list(d.spec.target_layer_ids) if d.spec is not None else []
    if all(a < b for a, b in zip(ids, ids[1:])):
        return None
    return f"dflash_config.target_layer_ids must be strictly increasing and duplicate-free; got {ids}"


PROFILE = Profile(
    engine="lmdeploy",
    label="lmdeploy",
    versions=at_least("0.18.0", "release"),
    drafts=frozenset({"v1"}),
    reads=frozenset({"nested"}),
    version_by="no DFlash2 (DFlashDraftModel is the only DFlash architecture it maps)",
    causality=causality,
    causality_text="dflash_config.causal, else causal, else sliding => causal; is_causal unread",
    taps="dflash_config.target_layer_ids (strictly increasing)",
    draft_tokens=None,
    verify_default=False,
    sources=(
        _fact(
            "DFlash v1 only: DFlashDraftModel maps to qwen3_dflash, no DFlash2 architecture",
            r.LMDEPLOY_V1,
            r.LMDEPLOY_NO_V2,
        ),
        _fact(
            "causality: dflash_config.causal, else a top-level causal, else sliding layers causal; is_causal "
            "is never read",
            r.LMDEPLOY_CAUSAL,
            r.LMDEPLOY_CAUSAL_DEFAULT,
            r.LMDEPLOY_NO_IS_CAUSAL,
        ),
        _fact(
            "requires an explicit layer_types list and strictly increasing target_layer_ids",
            r.LMDEPLOY_LAYER_TYPES,
            r.LMDEPLOY_TAPS_ORDER,
        ),
    ),
    requires=(Refusal("layer_types", _layer_types, str(r.LMDEPLOY_LAYER_TYPES), "DF803"),),
    constraints=(Refusal("tap order", _order, str(r.LMDEPLOY_TAPS_ORDER)),),
)

PROFILES = (PROFILE,)

# compat on every fixtures/real config, checked by hand against the cited code (tests/engines/test_golden.py)
GOLDEN = (
    ("z-lab_Qwen3.8-27B-DFlash2", PROFILE.id, "unsupported", ("DF800",)),  # DFlashDraftModel only
    ("z-lab_Muse-Glimmer-30B-DFlash2", PROFILE.id, "unsupported", ("DF800",)),
    ("z-lab_Qwen3-4B-DFlash-b16", PROFILE.id, "loads", ()),  # explicit layer_types, full layers
    ("speculators-0.9.0_tiny-dflash2", PROFILE.id, "unsupported", ("DF800",)),
    ("deepseek-ai_dspark_qwen3_8b_block7", PROFILE.id, "unsupported", ("DF800",)),  # not a DFlash drafter
)
