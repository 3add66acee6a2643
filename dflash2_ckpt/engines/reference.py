"""The z-lab HF reference implementation and speculators 0.9 (reloading a drafter for fine-tuning)."""
from __future__ import annotations

from . import causality
from .profile import Drafter, Fact, Profile, Refusal
from .versions import between, unversioned

ZLAB = "z-lab/dflash:dflash/model.py@10129599"
SPECULATORS = "vllm-project/speculators (0.9.0)"


def _taps_present(d: Drafter) -> str | None:
    dc = d.config.get("dflash_config")
    return None if isinstance(dc, dict) and "target_layer_ids" in dc else \
        "raises: dflash_config.target_layer_ids is missing"


def _verifier_present(d: Drafter) -> str | None:
    sc = d.config.get("speculators_config")
    if isinstance(sc, dict) and isinstance(sc.get("verifier"), dict):
        return None
    return "speculators_config.verifier: Field required"


ZLAB_PROFILE = Profile(
    engine="z-lab", label="z-lab reference", versions=unversioned("dflash@10129599"),
    drafts=frozenset({"v1", "v2"}), reads=frozenset({"nested"}),
    version_by="architecture (DFlash2DraftModel)",
    causality=causality.zlab_nested_only,
    causality_text="is_causal, else dflash_config.causal, else sliding => causal; window q - k < window per row",
    taps="dflash_config.target_layer_ids (0-based, output of that layer)",
    draft_tokens=None,
    sources=(Fact("DFlash2DraftModel; raises when target_layer_ids is missing; per-row sliding window q - k < "
                  "window", ZLAB), Fact("causality rule shared with vLLM >= 0.29", "CONTRACT §4")),
    requires=(Refusal("target_layer_ids", _taps_present, ZLAB, "DF803"),),
)

SPECULATORS_PROFILE = Profile(
    engine="speculators", label="speculators", versions=between("0.9", "0.10", "release"),
    drafts=frozenset({"v1", "v2"}), reads=frozenset({"flat"}),
    version_by="speculators_model_type ('dflash' / 'dflash2')",
    causality=causality.speculators,
    causality_text="sliding_window_non_causal makes sliding layers bidirectional (default true for dflash2, "
                   "false for dflash); full layers always bidirectional",
    taps="aux_hidden_state_layer_ids = target_layer_ids + 1",
    draft_tokens=None,
    sources=(Fact("flat dialect only; speculators_config.verifier is REQUIRED ('Field required' otherwise); trains "
                  "with an anchor-relative sliding window", SPECULATORS),
             Fact("DFlash2SpeculatorConfig.sliding_window_non_causal defaults to true", SPECULATORS
                  + ": DFlash2SpeculatorConfig")),
    requires=(Refusal("speculators_config.verifier", _verifier_present, SPECULATORS, "DF803"),),
)

PROFILES = (ZLAB_PROFILE, SPECULATORS_PROFILE)
