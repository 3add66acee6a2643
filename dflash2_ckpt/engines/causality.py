"""The in-block causality rules engines apply (docs/contract.md#in-block-causality), one function per rule.

Each returns one bool per draft layer (True = causal inside the block) or None when the rule's loader
does not read this dialect. Profiles point at these; nothing else decides causality.
"""
from __future__ import annotations

from ..formats.spec import DraftSpec
from .profile import Causality


def sliding_default(spec: DraftSpec) -> Causality:
    """sliding => causal; full-attention and untyped layers => bidirectional."""
    return tuple(t == "sliding_attention" for t in spec.layer_types)


def _all(spec: DraftSpec, value: bool) -> Causality:
    return (value,) * spec.num_hidden_layers


def vllm_flat(spec: DraftSpec) -> Causality:
    """vLLM's speculators loader: dflash_config.causal = not sliding_window_non_causal, one value for all
    layers, with an ABSENT key read as true (bidirectional) for v1 and v2 alike."""
    swnc = spec.causality.sliding_window_non_causal
    return _all(spec, not (True if swnc is None else swnc))


def zlab(spec: DraftSpec) -> Causality | None:
    """z-lab reference and vLLM with DFlash2: is_causal, else dflash_config.causal, else sliding default;
    flat configs go through vLLM's speculators loader."""
    if spec.dialect == "flat":
        return vllm_flat(spec)
    keys = spec.causality
    if keys.is_causal is not None:
        return _all(spec, keys.is_causal)
    if keys.dflash_causal is not None:
        return _all(spec, keys.dflash_causal)
    return sliding_default(spec)


ASSISTANT_MODEL_TYPE = "muse_glimmer_assistant"


def vllm_assistant_noncausal(spec: DraftSpec) -> Causality | None:
    """vLLM 0.33 and later: the z-lab rule, except that a config of model_type muse_glimmer_assistant gets
    dflash_config.causal = false unless it sets one, so only an explicit is_causal makes it causal
    (vllm==0.33.0:vllm/config/speculative.py, released.VLLM_ASSISTANT_NONCAUSAL)."""
    keys = spec.causality
    if spec.transformer_extra.get("model_type") == ASSISTANT_MODEL_TYPE and keys.is_causal is None \
            and keys.dflash_causal is None:
        return _all(spec, False)
    return zlab(spec)


def transformers_assistant(spec: DraftSpec) -> Causality:
    """The transformers assistant model an export is saved from runs every layer bidirectional, whatever
    the config says (`self.is_causal = False`: released.TF_BIDIRECTIONAL)."""
    return _all(spec, False)


def zlab_nested_only(spec: DraftSpec) -> Causality | None:
    return None if spec.dialect == "flat" else zlab(spec)


def vllm_legacy(spec: DraftSpec) -> Causality | None:
    """vLLM before DFlash2: top-level is_causal ignored; dflash_config.causal, else sliding default. Its
    speculators loader already set dflash_config.causal = not sliding_window_non_causal (vllm==0.27.1 algos.py)."""
    if spec.dialect == "flat":
        return vllm_flat(spec)
    if spec.dialect == "assistant":
        return None     # the assistant export is routed by newer vLLM only
    if spec.causality.dflash_causal is not None:
        return _all(spec, spec.causality.dflash_causal)
    return sliding_default(spec)


def sglang(spec: DraftSpec) -> Causality | None:
    """SGLang: explicit is_causal, else sliding default, but with no layer_types at all every layer is
    bidirectional whatever is_causal says; dflash_config.causal is never read; reads the nested dialect only (its DFlash loader
    does not load the assistant export's encoder.* names, formats/assistant.py)."""
    if spec.dialect in ("flat", "assistant"):
        return None
    if all(t is None for t in spec.layer_types):
        return _all(spec, False)    # no layer_types: every layer ENCODER_ONLY, is_causal not consulted
    if spec.causality.is_causal is not None:
        return _all(spec, spec.causality.is_causal)
    return sliding_default(spec)


def zlab_reference(spec: DraftSpec) -> Causality | None:
    """The published z-lab reference (PyPI dflash 0.1.0): is_causal, else sliding => causal; it does not read
    dflash_config.causal. Nested dialect only."""
    if spec.dialect == "flat":
        return None
    if spec.causality.is_causal is not None:
        return _all(spec, spec.causality.is_causal)
    return sliding_default(spec)


def speculators(spec: DraftSpec) -> Causality | None:
    """speculators: sliding_window_non_causal makes sliding layers bidirectional, full layers always are.
    Absent, it defaults to true for dflash2 and false for dflash (DFlash2SpeculatorConfig /
    DFlashSpeculatorConfig field defaults)."""
    if spec.dialect != "flat":
        return None
    swnc = spec.causality.sliding_window_non_causal
    if swnc is None:
        swnc = spec.version == "v2"
    return tuple((t == "sliding_attention") and not swnc for t in spec.layer_types)


def gguf(spec: DraftSpec) -> Causality | None:
    """llama.cpp: `dflash.attention.causal` alone decides, for every layer; absent means non-causal,
    whatever the layer types say (the context's causal flag defaults to false and only that key sets
    it: llama.cpp b11434:common/speculative.cpp common_speculative_impl_draft_dflash; sliding layers
    change the window, not the causality: llama.cpp b11434:src/models/dflash.cpp)."""
    return _all(spec, bool(spec.causality.is_causal))


def all_bidirectional(spec: DraftSpec) -> Causality | None:
    """dflash-mlx: loads only `is_causal: false` with every layer sliding, and runs them bidirectional;
    anything else it refuses to load (None: it runs nothing)."""
    loads = spec.dialect == "nested" and spec.causality.is_causal is False and \
        all(t == "sliding_attention" for t in spec.layer_types)
    return _all(spec, False) if loads else None


def intended(spec: DraftSpec) -> Causality:
    """What the checkpoint means: the reference reader of its own dialect (the z-lab reference for
    nested, speculators for flat, the trainer that wrote it; the transformers assistant model for the
    assistant export, which is saved from it)."""
    if spec.dialect == "assistant":
        return transformers_assistant(spec)
    result = speculators(spec) if spec.dialect == "flat" else zlab(spec)
    assert result is not None
    return result
