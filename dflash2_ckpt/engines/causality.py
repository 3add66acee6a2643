"""The in-block causality rules engines apply (docs/contract.md#in-block-causality), as data: one CausalRule per rule.

A rule names the config keys a loader reads, in order (the first one set decides every layer), what it
does when none is set, and how it reads the flat dialect; its `text` (shown by compat, inspect and the docs
table) is derived from those fields, so code and words cannot drift. Called on a spec, a rule returns one
bool per draft layer (True = causal inside the block), or None when its loader does not read that dialect.
Profiles point at these; nothing else decides causality. A loader no rule object can say keeps a function.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from ..formats.spec import DraftSpec
from .profile import Causality

# where each key lives in DraftSpec.causality (the GGUF key is parsed into the is_causal slot)
Key = Literal["is_causal", "dflash_config.causal", "dflash_config.is_causal", "dflash.attention.causal"]
_SLOT: dict[str, str] = {
    "is_causal": "is_causal",
    "dflash_config.causal": "dflash_causal",
    "dflash_config.is_causal": "dflash_is_causal",
    "dflash.attention.causal": "is_causal",
}
# the nested keys a reader of the nested dialect is told not to read, where its rule skips them
_NESTED: tuple[Key, ...] = ("is_causal", "dflash_config.causal")
Fallback = Literal["sliding", "bidirectional", "causal"]
Flat = Literal["vllm", "speculators"]
ALL_DIALECTS = frozenset({"nested", "flat", "gguf", "assistant"})


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


def speculators_flat(spec: DraftSpec) -> Causality:
    """speculators: sliding_window_non_causal makes sliding layers bidirectional, full layers always are.
    Absent, it defaults to true for dflash2 and false for dflash (DFlash2SpeculatorConfig /
    DFlashSpeculatorConfig field defaults)."""
    swnc = spec.causality.sliding_window_non_causal
    if swnc is None:
        swnc = spec.version == "v2"
    return tuple((t == "sliding_attention") and not swnc for t in spec.layer_types)


_FLAT = {"vllm": vllm_flat, "speculators": speculators_flat}
_FLAT_TEXT = {
    "vllm": "not sliding_window_non_causal for every layer, absent = bidirectional",
    "speculators": "sliding_window_non_causal makes sliding layers bidirectional (default true for "
    "dflash2, false for dflash); full layers bidirectional",
}
_FALLBACK_TEXT = {"sliding": "sliding => causal", "bidirectional": "bidirectional", "causal": "causal"}


@dataclass(frozen=True)
class CausalRule:
    """How one loader decides per-layer causality.

    keys: read in this order; the first one the config sets decides every layer.
    default: when none is set: "sliding" (sliding layers causal, the rest bidirectional), or one value
        for all layers.
    dialects: the dialects read with `keys` (others: None, the loader does not read them).
    flat: how the flat (speculators) dialect is read, where not with `keys`.
    untyped: with no layer_types at all, every layer gets this value before any key is consulted.
    model_type_default: (model_type, value) used where no key is set, before `default`."""

    keys: tuple[Key, ...] = ()
    default: Fallback = "sliding"
    dialects: frozenset[str] = frozenset({"nested", "assistant", "gguf"})
    flat: Flat | None = None
    untyped: bool | None = None
    model_type_default: tuple[tuple[str, bool], ...] = ()

    def __call__(self, spec: DraftSpec) -> Causality | None:
        if spec.dialect == "flat" and self.flat is not None:
            return _FLAT[self.flat](spec)
        if spec.dialect not in self.dialects:
            return None
        if self.untyped is not None and all(t is None for t in spec.layer_types):
            return _all(spec, self.untyped)
        for key in self.keys:
            value = getattr(spec.causality, _SLOT[key])
            if value is not None:
                return _all(spec, value)
        kind = spec.transformer_extra.get("model_type")
        for model_type, value in self.model_type_default:
            if kind == model_type:
                return _all(spec, value)
        return sliding_default(spec) if self.default == "sliding" else _all(spec, self.default == "causal")

    @property
    def text(self) -> str:
        """The rule in words: `is_causal, else dflash_config.causal, else sliding => causal; flat: ...`."""
        fallback = _FALLBACK_TEXT[self.default]
        if self.model_type_default:
            fallback = (
                ", ".join(
                    f"{'causal' if v else 'bidirectional'} for model_type {m}"
                    for m, v in self.model_type_default
                )
                + f", else {fallback}"
            )
        if not self.keys:
            first = f"every layer {fallback}" if self.default != "sliding" else fallback
        else:
            first = ", else ".join(self.keys) + (
                f" for every layer; absent = {fallback}"
                if self.default != "sliding"
                else f", else {fallback}"
            )
        parts = [first] if self.dialects - {"flat"} else []
        if self.untyped is not None:
            parts.append(f"no layer_types => {'causal' if self.untyped else 'bidirectional'}")
        if set(self.keys) & set(_NESTED) or (not self.keys and "nested" in self.dialects):
            parts += [f"{k} not read" for k in _NESTED if k not in self.keys]
        if self.flat is not None:
            parts.append(f"flat: {_FLAT_TEXT[self.flat]}")
        return "; ".join(parts)


# vLLM 0.20-0.22: the proposer builds every draft layer's attention metadata with causal=False, whatever the
# config says (released.VLLM_ALWAYS_NONCAUSAL)
vllm_noncausal = CausalRule(default="bidirectional", dialects=frozenset({"nested", "flat", "gguf"}))

# vLLM 0.23-0.25: dflash_config.causal for every layer, absent = non-causal (a sliding layer is not causal by
# default); the speculators mapping sets no causal key, so every flat drafter runs bidirectional
# (released.VLLM_PROPOSER_CAUSAL, VLLM_RUNNER2_CAUSAL, VLLM_FLAT_NO_CAUSAL)
vllm_dflash_causal = CausalRule(
    ("dflash_config.causal",), default="bidirectional", dialects=frozenset({"nested", "flat", "gguf"})
)

# z-lab reference and vLLM with DFlash2: is_causal, else dflash_config.causal, else sliding default; flat
# configs go through vLLM's speculators loader
zlab = CausalRule(("is_causal", "dflash_config.causal"), flat="vllm")

ASSISTANT_MODEL_TYPE = "muse_glimmer_assistant"

# vLLM 0.33 and later: the z-lab rule, except that a config of model_type muse_glimmer_assistant gets
# dflash_config.causal = false unless it sets one, so only an explicit is_causal makes it causal
# (vllm==0.33.0:vllm/config/speculative.py, released.VLLM_ASSISTANT_NONCAUSAL)
vllm_assistant_noncausal = CausalRule(
    ("is_causal", "dflash_config.causal"), flat="vllm", model_type_default=((ASSISTANT_MODEL_TYPE, False),)
)

# vLLM before DFlash2: top-level is_causal ignored; dflash_config.causal, else sliding default. Its
# speculators loader already set dflash_config.causal = not sliding_window_non_causal (vllm==0.27.1
# algos.py); the assistant export is routed by newer vLLM only
vllm_legacy = CausalRule(("dflash_config.causal",), flat="vllm", dialects=frozenset({"nested", "gguf"}))

# SGLang: explicit is_causal, else sliding default, but with no layer_types at all every layer is
# bidirectional whatever is_causal says (every layer ENCODER_ONLY); dflash_config.causal is never read;
# reads the nested dialect only (its DFlash loader does not load the assistant export's encoder.* names)
sglang = CausalRule(("is_causal",), dialects=frozenset({"nested", "gguf"}), untyped=False)

# SGLang 0.5.11-0.5.13: every draft layer ENCODER_ONLY (released.SGLANG_ALL_NONCAUSAL)
sglang_noncausal = CausalRule(default="bidirectional", dialects=frozenset({"nested", "gguf"}))

# SGLang 0.5.14-0.5.16: sliding layers causal, full and untyped ones not; is_causal is not read
sglang_sliding = CausalRule(dialects=frozenset({"nested", "gguf"}), untyped=False)


def sglang_0517(spec: DraftSpec) -> Causality | None:
    """SGLang 0.5.17: a full layer is causal iff is_causal (default false), a sliding layer always is; no
    layer_types: every layer bidirectional (released.SGLANG_FULL_IS_CAUSAL, SGLANG_SLIDING_DECODER)."""
    if spec.dialect in ("flat", "assistant"):
        return None
    if all(t is None for t in spec.layer_types):
        return _all(spec, False)
    return tuple(t == "sliding_attention" or bool(spec.causality.is_causal) for t in spec.layer_types)


# The published z-lab reference (PyPI dflash 0.1.0): is_causal, else sliding => causal; it does not read
# dflash_config.causal. No flat dialect.
zlab_reference = CausalRule(("is_causal",))

# speculators reads its own flat dialect only
speculators = CausalRule(dialects=frozenset(), flat="speculators")

# llama.cpp: `dflash.attention.causal` alone decides, for every layer; absent means non-causal, whatever
# the layer types say (the context's causal flag defaults to false and only that key sets it: llama.cpp
# b11434:common/speculative.cpp common_speculative_impl_draft_dflash; sliding layers change the window,
# not the causality: llama.cpp b11434:src/models/dflash.cpp)
gguf = CausalRule(("dflash.attention.causal",), default="bidirectional", dialects=ALL_DIALECTS)


def transformers_assistant(spec: DraftSpec) -> Causality:
    """The transformers assistant model an export is saved from runs every layer bidirectional, whatever
    the config says (`self.is_causal = False`: released.TF_BIDIRECTIONAL)."""
    return _all(spec, False)


def all_bidirectional(spec: DraftSpec) -> Causality | None:
    """dflash-mlx: loads only `is_causal: false` with every layer sliding, and runs them bidirectional;
    anything else it refuses to load (None: it runs nothing)."""
    loads = (
        spec.dialect == "nested"
        and spec.causality.is_causal is False
        and all(t == "sliding_attention" for t in spec.layer_types)
    )
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
