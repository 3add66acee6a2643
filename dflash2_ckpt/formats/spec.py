"""DraftSpec: the one canonical description of a drafter that layout, checks, convert and smoke consume.

Both config dialects parse into this form (docs/contract.md#the-nested-dialect, #the-flat-dialect). Tap
ids are always the nested
convention (`target_layer_ids`, 0-based decoder indices whose output feeds `fc`); the flat
`aux_hidden_state_layer_ids` are these plus one.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Literal

Version = Literal["v1", "v2"]
Dialect = Literal["nested", "flat", "gguf", "assistant"]  # gguf: llama.cpp metadata (formats/gguf_spec.py)
LayerType = Literal["sliding_attention", "full_attention"]

V2_KEYS = ("conv_kernel_size", "conv_group_size", "selector_rank", "selector_top_k")


@dataclass(frozen=True)
class CausalityKeys:
    """The raw causality switches as written in the config; resolved per engine by engines/causality.py."""

    is_causal: bool | None = None  # nested, top level
    dflash_causal: bool | None = None  # nested, dflash_config.causal
    dflash_is_causal: bool | None = None  # nested, dflash_config.is_causal (exllamav3 reads it)
    sliding_window_non_causal: bool | None = None  # flat (speculators)


@dataclass(frozen=True)
class DraftSpec:
    version: Version
    dialect: Dialect
    hidden_size: int
    intermediate_size: int
    num_hidden_layers: int
    num_attention_heads: int
    num_key_value_heads: int
    head_dim: int
    vocab_size: int
    target_layer_ids: tuple[int, ...]
    layer_types: tuple[LayerType | None, ...]  # None: the config gives no type for this layer
    causality: CausalityKeys = CausalityKeys()
    rms_norm_eps: float = 1e-6
    hidden_act: str = "silu"
    attention_bias: bool = False
    sliding_window: int | None = None
    rope_theta: float = 10000.0
    rope_scaling: Mapping[str, Any] | None = None  # rope_parameters minus rope_theta, or rope_scaling
    max_position_embeddings: int | None = None
    target_hidden_size: int | None = None
    num_target_layers: int | None = None
    mask_token_id: int | None = None
    block_size: int | None = None
    # v2 only (None for v1)
    conv_kernel_size: int | None = None
    conv_group_size: int | None = None
    selector_rank: int | None = None
    selector_top_k: int | None = None
    input_embedding_scale: float = 1.0
    output_multiplier: float = 1.0
    final_logit_softcapping: float | None = None
    dtype: str | None = None
    # keys no field above models, kept verbatim so a conversion never loses them
    transformer_extra: Mapping[str, Any] = field(default_factory=dict)
    drafter_extra: Mapping[str, Any] = field(default_factory=dict)
    # where vocab_size came from: "config", "bound" (no vocab_size: the smallest vocabulary the mask and
    # special token ids allow) or "target" (the target's config); not part of identity
    vocab_from: str = field(default="config", compare=False)
    # the DFlash family beside plain DFlash / DFlash2 (formats/families.py: "ricursive", "beam", "xpress", ...);
    # decided from the architecture, config and tensors at detection, so not part of identity
    family: str | None = field(default=None, compare=False)
    # spec field -> JSON path in the config it came from, for messages; not part of identity
    paths: Mapping[str, str] = field(default_factory=dict, compare=False, repr=False)

    def path(self, name: str) -> str:
        return self.paths.get(name, name)

    @property
    def fc_in_features(self) -> int:
        return len(self.target_layer_ids) * (self.target_hidden_size or self.hidden_size)

    @property
    def conv_groups(self) -> int | None:
        if self.conv_group_size is None or self.hidden_size % self.conv_group_size:
            return None
        return self.hidden_size // self.conv_group_size

    @property
    def aux_hidden_state_layer_ids(self) -> tuple[int, ...]:
        return tuple(t + 1 for t in self.target_layer_ids)

    def with_(self, **changes: Any) -> DraftSpec:
        return replace(self, **changes)
