"""Fields shared by both dialects: the Qwen3 transformer config (nested root / flat transformer_layer_config)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from .keys import STANDARD_HF_KEYS  # noqa: F401  (re-exported: its old home)

PosInt = Annotated[int, Field(ge=1)]
NonNegInt = Annotated[int, Field(ge=0)]
PosFloat = Annotated[float, Field(gt=0)]
LayerTypeField = Literal["sliding_attention", "full_attention"]

# Unknown keys are kept (extra="allow") on purpose: a conversion must carry them verbatim.
# strict: JSON true is not 1, 8.0 is not 8; NaN / Infinity literals are refused.
MODEL_CONFIG = ConfigDict(extra="allow", strict=True, allow_inf_nan=False, populate_by_name=True)


class RopeParameters(BaseModel):
    model_config = MODEL_CONFIG
    rope_theta: PosFloat
    rope_type: str = "default"


class TransformerFields(BaseModel):
    """Qwen3 text config as the drafter uses it."""

    model_config = MODEL_CONFIG

    model_type: str | None = None
    hidden_size: PosInt
    intermediate_size: PosInt
    num_hidden_layers: PosInt
    num_attention_heads: PosInt
    num_key_value_heads: PosInt | None = None
    head_dim: PosInt | None = None
    vocab_size: PosInt
    rms_norm_eps: PosFloat = 1e-6
    hidden_act: str = "silu"
    attention_bias: bool = False
    max_position_embeddings: PosInt | None = None
    rope_parameters: RopeParameters | None = None
    rope_theta: PosFloat | None = None
    rope_scaling: dict[str, Any] | None = None
    layer_types: list[LayerTypeField] | None = None
    sliding_window: PosInt | None = None
    use_sliding_window: bool | None = None
    max_window_layers: NonNegInt | None = None
    tie_word_embeddings: bool | None = None
    dtype: str | None = None
    torch_dtype: str | None = None


class DrafterScales(BaseModel):
    """Scaling keys of DFlash2 (nested in dflash_config, top level in the flat dialect)."""

    model_config = MODEL_CONFIG
    input_embedding_scale: float | None = None
    output_multiplier: PosFloat | None = None
    final_logit_softcapping: Annotated[float, Field(ge=0)] | None = None


class V2Fields(BaseModel):
    model_config = MODEL_CONFIG
    conv_kernel_size: PosInt
    conv_group_size: PosInt
    selector_rank: PosInt
    selector_top_k: PosInt
