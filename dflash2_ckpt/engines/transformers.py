"""transformers' DFlash assisted generation (`generate(assistant_model=..., speculation_type="dflash")`), read
from the released wheels 5.10.4 ... 5.25.0 (released.py cites each fact): it drafts with the Muse-Glimmer
assistant model, i.e. DFlash v1 in the assistant export dialect; it has no DFlash2 selector or conv.

Bisected over the releases: DFlash assisted generation first ships in 5.15.0 (5.14.1 has none). Across
5.15.0 ... 5.25.0 the draft layers are bidirectional, the taps are the outputs of target_layer_ids and
block_size - 1 mask slots are drafted; what changed is how the noise block is embedded (the raw
embedding table before 5.17, the target's embedding module from 5.17, so a scaled embedding applies its
scale) and, without a change in behaviour, how the tapped hidden states are requested (5.17 and 5.23).
"""

from __future__ import annotations

from ..formats.spec import DraftSpec
from . import released as r
from .profile import Causality, Default, Drafter, DraftTokens, Profile, Refusal
from .profile import fact as _fact
from .versions import at_least, between

RANK = 60  # engine display order (engines/registry.py)


def bidirectional(spec: DraftSpec) -> Causality | None:
    """Every assistant layer is bidirectional inside the block (is_causal = False; sliding layers get a
    bidirectional sliding-window mask)."""
    return (False,) * spec.num_hidden_layers if spec.dialect == "assistant" else None


def _sliding_window_int(d: Drafter) -> str | None:
    """MuseGlimmerAssistantConfig validates its fields on construction: sliding_window must be an int."""
    if "sliding_window" in d.config and not isinstance(d.config["sliding_window"], int):
        return (
            f"sliding_window is {d.config['sliding_window']!r}: MuseGlimmerAssistantConfig is a strict dataclass "
            "whose sliding_window is an int, so loading the config fails (write an integer, e.g. 2048, or drop "
            "the key; full-attention layers do not use it)"
        )
    return None


STRICT = Refusal("sliding_window is an integer", _sliding_window_int, f"{r.TF_STRICT}; {r.TF_SLIDING_INT}")


COMMON = (
    _fact(
        "DFlash assisted generation with speculation_type='dflash' through the assistant model; no DFlash2 "
        "selector; first in 5.15.0",
        r.TF_DFLASH,
        r.TF_NO_SELECTOR,
        r.TF_NO_DFLASH,
    ),
    _fact(
        "reads target_layer_ids, block_size and mask_token_id from the assistant config and drafts "
        "block_size - 1 mask slots",
        r.TF_TAPS,
        r.TF_TOKENS,
    ),
    _fact(
        "the config class is strict: a null where a field is typed int (sliding_window) fails the load",
        r.TF_STRICT,
        r.TF_SLIDING_INT,
    ),
    _fact(
        "config defaults: target_layer_ids [1, 13, 25, 37, 49], mask_token_id 201818, block_size 16, "
        "every layer sliding",
        r.TF_DEFAULT_TAPS,
        r.TF_DEFAULT_MASK,
        r.TF_DEFAULT_BLOCK,
        r.TF_DEFAULT_SLIDING,
    ),
    _fact("draft layers are bidirectional", r.TF_BIDIRECTIONAL),
    _fact(
        "the first target forward is the prefill (nothing drafted); each later forward verifies one block and "
        "puts the tokens it commits to the streamer",
        r.TF_PREFILL,
        r.TF_STREAMER,
    ),
)
DEFAULTS = (
    Default(
        "target_layer_ids",
        (1, 13, 25, 37, 49),
        str(r.TF_DEFAULT_TAPS),
        reads=("target_layer_ids",),
        why="fc is fed hidden states it was not trained on",
    ),
    Default(
        "mask_token_id",
        201818,
        str(r.TF_DEFAULT_MASK),
        reads=("mask_token_id",),
        why="a wrong mask id drafts from the wrong embedding",
    ),
    Default(
        "block_size",
        16,
        str(r.TF_DEFAULT_BLOCK),
        reads=("block_size",),
        why="drafts blocks of a length it was not trained on",
    ),
)
TAPS = "target_layer_ids at the top level (0-based, output of that layer)"
TOKENS = DraftTokens("block_size - 1 mask slots", lambda b: b - 1, "block_size - 1", str(r.TF_TOKENS))
CAUSALITY_TEXT = "bidirectional (is_causal = False; sliding layers get a bidirectional window)"
VERSION_BY = "assistant model class (MuseGlimmerAssistantModel); no DFlash2"

FIRST = Profile(
    engine="transformers",
    label="transformers",
    versions=between("5.15.0", "5.17.0", "release"),
    drafts=frozenset({"v1"}),
    reads=frozenset({"assistant"}),
    version_by=VERSION_BY,
    causality=bidirectional,
    causality_text=CAUSALITY_TEXT,
    taps=TAPS,
    draft_tokens=TOKENS,
    sources=COMMON
    + (
        _fact(
            "taps: every hidden state is requested and layer i's output is read at index i + 1",
            r.TF_TAPS_EVERY,
            r.TF_TAPS_EVERY_INDEX,
        ),
        _fact(
            "the noise block (anchor + mask slots) is embedded with the raw embedding table: a target whose "
            "embedding module scales its output drafts from unscaled embeddings",
            r.TF_NOISE_TABLE,
        ),
    ),
    defaults=DEFAULTS,
    constraints=(STRICT,),
)

CURRENT = Profile(
    engine="transformers",
    label="transformers",
    versions=at_least("5.17.0", "release"),
    drafts=frozenset({"v1"}),
    reads=frozenset({"assistant"}),
    version_by=VERSION_BY,
    causality=bidirectional,
    causality_text=CAUSALITY_TEXT,
    taps=TAPS,
    draft_tokens=TOKENS,
    sources=COMMON
    + (
        _fact(
            "taps: only the tapped layers' outputs are requested, still layer i's output (5.17-5.22: ids as "
            "given, the embedding output left out of a selection; from 5.23: ids + 1, the embedding kept)",
            r.TF_TAPS_SELECTED,
            r.TF_TAPS_SELECTED_INDEX,
            r.TF_SELECTION_NO_EMBED,
            r.TF_TAPS_PLUS1,
            r.TF_TAPS_PLUS1_INDEX,
        ),
        _fact(
            "the noise block is embedded through the target's embedding module (its scale applies, an "
            "embed_norm is bypassed)",
            r.TF_NOISE_MODULE,
        ),
    ),
    defaults=DEFAULTS,
    constraints=(STRICT,),
)

PROFILES = (FIRST, CURRENT)
