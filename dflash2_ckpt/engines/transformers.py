"""transformers' DFlash assisted generation (`generate(assistant_model=..., speculation_type="dflash")`), read
from transformers 5.24.0 (released.py cites each fact): it drafts with the Muse-Glimmer assistant model, i.e.
DFlash v1 in the assistant export dialect; it has no DFlash2 selector or conv."""
from __future__ import annotations

from ..formats.spec import DraftSpec
from . import released as r
from .profile import Causality, Cite, Default, DraftTokens, Fact, Profile
from .versions import at_least


def _fact(text: str, *cites: Cite) -> Fact:
    return Fact(text, "; ".join(str(c) for c in cites), cites)


def bidirectional(spec: DraftSpec) -> Causality | None:
    """Every assistant layer is bidirectional inside the block (is_causal = False; sliding layers get a
    bidirectional sliding-window mask)."""
    return (False,) * spec.num_hidden_layers if spec.dialect == "assistant" else None


PROFILE = Profile(
    engine="transformers", label="transformers", versions=at_least("5.24.0", "release"),
    drafts=frozenset({"v1"}), reads=frozenset({"assistant"}),
    version_by="assistant model class (MuseGlimmerAssistantModel); no DFlash2",
    causality=bidirectional,
    causality_text="bidirectional (is_causal = False; sliding layers get a bidirectional window)",
    taps="target_layer_ids at the top level (0-based, output of that layer)",
    draft_tokens=DraftTokens("block_size - 1 mask slots", lambda b: b - 1, "block_size - 1", str(r.TF_TOKENS)),
    sources=(_fact("DFlash assisted generation with speculation_type='dflash' through the assistant model; no "
                   "DFlash2 selector", r.TF_DFLASH, r.TF_NO_SELECTOR),
             _fact("reads target_layer_ids, block_size and mask_token_id from the assistant config and drafts "
                   "block_size - 1 mask slots", r.TF_TAPS, r.TF_TOKENS),
             _fact("config defaults: target_layer_ids [1, 13, 25, 37, 49], mask_token_id 201818, block_size 16, "
                   "every layer sliding", r.TF_DEFAULT_TAPS, r.TF_DEFAULT_MASK, r.TF_DEFAULT_BLOCK,
                   r.TF_DEFAULT_SLIDING),
             _fact("draft layers are bidirectional", r.TF_BIDIRECTIONAL)),
    defaults=(Default("target_layer_ids", (1, 13, 25, 37, 49), str(r.TF_DEFAULT_TAPS), reads=("target_layer_ids",),
                      why="fc is fed hidden states it was not trained on"),
              Default("mask_token_id", 201818, str(r.TF_DEFAULT_MASK), reads=("mask_token_id",),
                      why="a wrong mask id drafts from the wrong embedding"),
              Default("block_size", 16, str(r.TF_DEFAULT_BLOCK), reads=("block_size",),
                      why="drafts blocks of a length it was not trained on")),
)

PROFILES = (PROFILE,)
