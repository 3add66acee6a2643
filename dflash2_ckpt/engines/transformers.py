"""transformers' DFlash assisted generation (`generate(assistant_model=..., speculation_type="dflash")`), read
from the released wheels 5.10.4 ... 5.24.0 (released.py cites each fact): it drafts with the Muse-Glimmer
assistant model, i.e. DFlash v1 in the assistant export dialect; it has no DFlash2 selector or conv.

Bisected over the releases: DFlash assisted generation first ships in 5.15.0 (5.14.1 has none). Across
5.15.0 ... 5.24.0 the draft layers are bidirectional, the taps are the outputs of target_layer_ids and
block_size - 1 mask slots are drafted; what changed is how the noise block is embedded (the raw
embedding table before 5.17, the target's embedding module from 5.17, so a scaled embedding applies its
scale) and, without a change in behaviour, how the tapped hidden states are requested (5.17 and 5.23).
"""
from __future__ import annotations

from ..formats.spec import DraftSpec
from . import released as r
from .profile import Causality, Cite, Default, DraftTokens, Fact, Profile
from .versions import at_least, between


def _fact(text: str, *cites: Cite) -> Fact:
    return Fact(text, "; ".join(str(c) for c in cites), cites)


def bidirectional(spec: DraftSpec) -> Causality | None:
    """Every assistant layer is bidirectional inside the block (is_causal = False; sliding layers get a
    bidirectional sliding-window mask)."""
    return (False,) * spec.num_hidden_layers if spec.dialect == "assistant" else None


COMMON = (
    _fact("DFlash assisted generation with speculation_type='dflash' through the assistant model; no DFlash2 "
          "selector; first in 5.15.0", r.TF_DFLASH, r.TF_NO_SELECTOR, r.TF_NO_DFLASH),
    _fact("reads target_layer_ids, block_size and mask_token_id from the assistant config and drafts "
          "block_size - 1 mask slots", r.TF_TAPS, r.TF_TOKENS),
    _fact("config defaults: target_layer_ids [1, 13, 25, 37, 49], mask_token_id 201818, block_size 16, "
          "every layer sliding", r.TF_DEFAULT_TAPS, r.TF_DEFAULT_MASK, r.TF_DEFAULT_BLOCK, r.TF_DEFAULT_SLIDING),
    _fact("draft layers are bidirectional", r.TF_BIDIRECTIONAL),
    _fact("the first target forward is the prefill (nothing drafted); each later forward verifies one block and "
          "puts the tokens it commits to the streamer", r.TF_PREFILL, r.TF_STREAMER),
)
DEFAULTS = (Default("target_layer_ids", (1, 13, 25, 37, 49), str(r.TF_DEFAULT_TAPS), reads=("target_layer_ids",),
                    why="fc is fed hidden states it was not trained on"),
            Default("mask_token_id", 201818, str(r.TF_DEFAULT_MASK), reads=("mask_token_id",),
                    why="a wrong mask id drafts from the wrong embedding"),
            Default("block_size", 16, str(r.TF_DEFAULT_BLOCK), reads=("block_size",),
                    why="drafts blocks of a length it was not trained on"))
TAPS = "target_layer_ids at the top level (0-based, output of that layer)"
TOKENS = DraftTokens("block_size - 1 mask slots", lambda b: b - 1, "block_size - 1", str(r.TF_TOKENS))
CAUSALITY_TEXT = "bidirectional (is_causal = False; sliding layers get a bidirectional window)"
VERSION_BY = "assistant model class (MuseGlimmerAssistantModel); no DFlash2"

FIRST = Profile(
    engine="transformers", label="transformers", versions=between("5.15.0", "5.17.0", "release"),
    drafts=frozenset({"v1"}), reads=frozenset({"assistant"}), version_by=VERSION_BY,
    causality=bidirectional, causality_text=CAUSALITY_TEXT, taps=TAPS, draft_tokens=TOKENS,
    sources=COMMON + (
        _fact("taps: every hidden state is requested and layer i's output is read at index i + 1",
              r.TF_TAPS_EVERY, r.TF_TAPS_EVERY_INDEX),
        _fact("the noise block (anchor + mask slots) is embedded with the raw embedding table: a target whose "
              "embedding module scales its output drafts from unscaled embeddings", r.TF_NOISE_TABLE)),
    defaults=DEFAULTS,
)

CURRENT = Profile(
    engine="transformers", label="transformers", versions=at_least("5.17.0", "release"),
    drafts=frozenset({"v1"}), reads=frozenset({"assistant"}), version_by=VERSION_BY,
    causality=bidirectional, causality_text=CAUSALITY_TEXT, taps=TAPS, draft_tokens=TOKENS,
    sources=COMMON + (
        _fact("taps: only the tapped layers' outputs are requested, still layer i's output (5.17-5.22: ids as "
              "given, the embedding output left out of a selection; from 5.23: ids + 1, the embedding kept)",
              r.TF_TAPS_SELECTED, r.TF_TAPS_SELECTED_INDEX, r.TF_SELECTION_NO_EMBED, r.TF_TAPS_PLUS1,
              r.TF_TAPS_PLUS1_INDEX),
        _fact("the noise block is embedded through the target's embedding module (its scale applies, an "
              "embed_norm is bypassed)", r.TF_NOISE_MODULE)),
    defaults=DEFAULTS,
)

PROFILES = (FIRST, CURRENT)
