"""SGLang: DFlash v1 only before 0.5.19; DFlash2 from 0.5.19 (sgl-project/sglang#35371)."""
from __future__ import annotations

from ..formats.spec import DraftSpec
from . import causality, quant, serve
from .profile import Default, DraftTokens, Fact, Profile
from .versions import at_least, below

TOKENS = DraftTokens("--speculative-num-draft-tokens", lambda b: b, "block_size",
                     "sgl-project/sglang#35371 (speculative_num_draft_tokens = block_size: 8 where vLLM takes 7)")


def guessed_taps(spec: DraftSpec) -> tuple[int, ...] | None:
    """The fallback when a config names no taps: evenly spaced from layer 1 to num_target_layers - 3
    ([1, 16, 31, 46, 61] for 5 draft layers on a 64-layer target, where Qwen3.8 was trained on
    [5, 19, 33, 47, 61])."""
    n, k = spec.num_target_layers, spec.num_hidden_layers
    if n is None or n < 4 or k < 1:
        return None
    if k == 1:
        return (n // 2,)
    span = n - 4
    return tuple(int(round(1 + i * span / (k - 1))) for i in range(k))


TAPS = Default("target_layer_ids", guessed_taps, "sgl-project/sglang#37475; z-lab/dflash#156",
               why="a guessed tap set feeds fc hidden states it was not trained on")
BLOCK = Default("block_size", 16, "ENGINES.md §1 (silent defaults: block_size 16)",
                why="drafts a block of a length the drafter was not trained on")
NESTED_ONLY = Fact("reads the nested dialect only; a flat config must be converted", "ENGINES.md §1; CONTRACT §4")

OLD = Profile(
    engine="sglang", label="SGLang", versions=below("0.5.19", "release"),
    drafts=frozenset({"v1"}), reads=frozenset({"nested"}),
    version_by="no DFlash2 (v1 only)",
    causality=causality.sglang,
    causality_text="explicit is_causal, else sliding => causal",
    taps="dflash_config.target_layer_ids (0-based); guessed when missing",
    draft_tokens=TOKENS,
    sources=(Fact("no DFlash2 in any tag up to 0.5.18 (v1 only)", "verl-SpeCo#78"), NESTED_ONLY),
    defaults=(TAPS, BLOCK), quant=quant.sglang, serve=serve.sglang,
)

CURRENT = Profile(
    engine="sglang", label="SGLang", versions=at_least("0.5.19", "release"),
    drafts=frozenset({"v1", "v2"}), reads=frozenset({"nested"}),
    version_by="fields: the conv and selector switch on from the dflash_config keys, not the architecture",
    causality=causality.sglang,
    causality_text="explicit is_causal, else sliding => causal",
    taps="dflash_config.target_layer_ids (0-based); guessed when missing",
    draft_tokens=TOKENS,
    sources=(Fact("DFlash2 via #35371; conv and selector switch on from the dflash_config FIELDS; "
                  "speculative_num_draft_tokens = block_size", "sgl-project/sglang#35371"),
             Fact("a quantized target lm_head was refused until #35496", "sgl-project/sglang#35496"),
             Fact("a compressed-tensors W4A16 drafter loads but fc.weight_packed/_scale/_shape are dropped "
                  "silently; acceptance length 1.00, no error", "sgl-project/sglang#39087, #39254, #35534"),
             NESTED_ONLY),
    defaults=(TAPS, BLOCK), quant=quant.sglang, serve=serve.sglang,
)

PROFILES = (OLD, CURRENT)
