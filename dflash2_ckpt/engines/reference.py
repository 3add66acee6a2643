"""The z-lab reference implementation as released on PyPI (`dflash` 0.1.0) and speculators 0.9.0 (reloading a
drafter for fine-tuning); released.py cites each fact.

The z-lab profile used to cite z-lab/dflash@10129599, a commit that cannot be found, and said the reference
raises when target_layer_ids is missing; the released dflash 0.1.0 computes default taps instead
(build_target_layer_ids) and resolves causality from is_causal and the layer types only.
"""

from __future__ import annotations

from . import causality
from . import released as r
from .attention_keys import ignores_sinks, ignores_use_swa, ignores_v_scale
from .profile import Default, Drafter, Profile, Refusal
from .profile import fact as _fact
from .sglang import guessed_taps
from .versions import at_least, between

RANK = 50  # engine display order (engines/registry.py)


def _verifier_present(d: Drafter) -> str | None:
    sc = d.config.get("speculators_config")
    if isinstance(sc, dict) and isinstance(sc.get("verifier"), dict):
        return None
    return "speculators_config.verifier: Field required"


ZLAB_PROFILE = Profile(
    engine="z-lab",
    label="z-lab reference (dflash)",
    versions=at_least("0.1.0", "release"),
    drafts=frozenset({"v1", "v2"}),
    reads=frozenset({"nested"}),
    version_by="architecture (DFlash2DraftModel)",
    causality=causality.zlab_reference,
    dist="dflash",
    taps="dflash_config.target_layer_ids, else top-level, else guessed evenly (0-based, output of that layer)",
    draft_tokens=None,
    sources=(
        _fact("DFlash2DraftModel; per-row sliding window q - k < window", r.ZLAB_DFLASH2, r.ZLAB_WINDOW),
        _fact(
            "a config without target_layer_ids gets evenly spaced default taps (no error); block_size "
            "defaults to 16",
            r.ZLAB_TAPS,
            r.ZLAB_BLOCK,
        ),
        _fact("causality per layer: is_causal, else sliding => causal", r.ZLAB_CAUSAL),
        _fact(
            "weights load through transformers' from_pretrained (dflash 0.1.0 pins transformers 5.15.0): a "
            "stored tensor the draft model has no parameter for (a target copy, a vocabulary map, an unknown "
            "name) is logged as UNEXPECTED and skipped; a model. prefix is stripped where the bare name is "
            "a parameter",
            r.ZLAB_PRETRAINED,
            r.ZLAB_TRANSFORMERS,
            r.TF_UNEXPECTED,
            r.TF_UNEXPECTED_WARNS,
            r.TF_PREFIX_STRIPPED,
            r.TF_QWEN3_PREFIX,
        ),
    ),
    defaults=(
        Default(
            "target_layer_ids",
            guessed_taps,
            str(r.ZLAB_TAPS),
            why="fc is fed hidden states it was not trained on",
        ),
        Default("block_size", 16, str(r.ZLAB_BLOCK), why="drafts blocks of a length it was not trained on"),
    ),
    ignores=(
        ignores_use_swa(r.ZLAB_NO_USE_SWA),
        ignores_sinks(r.ZLAB_NO_SINKS),
        ignores_v_scale(r.ZLAB_NO_V_SCALE),
    ),
)

SPECULATORS_PROFILE = Profile(
    engine="speculators",
    label="speculators",
    versions=between("0.9", "0.10", "release"),
    drafts=frozenset({"v1", "v2"}),
    reads=frozenset({"flat"}),
    version_by="speculators_model_type ('dflash' / 'dflash2')",
    causality=causality.speculators,
    conversion_loader=True,
    taps="aux_hidden_state_layer_ids = target_layer_ids + 1",
    draft_tokens=None,
    sources=(
        _fact(
            "flat dialect only; speculators_config.verifier is required ('Field required' otherwise)",
            r.SPEC_VERIFIER,
        ),
        _fact(
            "sliding_window_non_causal defaults to true for dflash2 and false for dflash; dflash2 geometry "
            "defaults T=2, group 16, rank 256, top-k 16",
            r.SPEC_V2_SWNC,
            r.SPEC_V1_SWNC,
            r.SPEC_V2_GEOMETRY,
        ),
    ),
    requires=(Refusal("speculators_config.verifier", _verifier_present, str(r.SPEC_VERIFIER), "DF803"),),
    ignores=(ignores_v_scale(r.SPEC_NO_V_SCALE, r.SPEC_V2_NO_V_SCALE),),
)

PROFILES = (ZLAB_PROFILE, SPECULATORS_PROFILE)
