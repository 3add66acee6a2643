"""The nested dialect (z-lab, vLLM, SGLang): a Qwen3 config with the DFlash knobs in `dflash_config`
(docs/contract.md#the-nested-dialect)."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from .common import MODEL_CONFIG, DrafterScales, NonNegInt, PosInt, TransformerFields, V2Fields

TapIds = Annotated[list[NonNegInt], Field(min_length=1)]


class DFlashConfigV1(DrafterScales):
    model_config = MODEL_CONFIG
    target_layer_ids: TapIds
    mask_token_id: NonNegInt | None = None
    block_size: PosInt | None = None
    causal: bool | None = None
    sample_from_anchor: bool | None = None
    # MiMo-style keys vLLM's DFlash reads (layer_ids before target_layer_ids; use_swa / swa_window_size /
    # attention_sink_bias for the sliding window; attention_value_scale): modelled so they are checked, kept by
    # convert
    layer_ids: list[NonNegInt] | None = None
    use_swa: bool | None = None
    swa_window_size: PosInt | None = None
    attention_sink_bias: bool | None = None
    # MiMo's factor on V (vLLM 0.31.0 and SGLang 0.5.20 on read it; engines/attention_keys.py)
    attention_value_scale: float | None = None


class DFlashConfigV2(V2Fields, DFlashConfigV1):
    model_config = MODEL_CONFIG


class NestedV1Config(TransformerFields):
    """`DFlashDraftModel`, including the old dialect with top-level block_size and rope_theta."""

    model_config = MODEL_CONFIG | {"title": "DFlash v1 drafter config (nested dialect)"}
    architectures: Annotated[list[str], Field(min_length=1)]
    dflash_config: DFlashConfigV1
    is_causal: bool | None = None
    num_target_layers: PosInt | None = None
    target_hidden_size: PosInt | None = None
    block_size: PosInt | None = None  # old dialect; must agree with dflash_config.block_size
    mask_token_id: NonNegInt | None = None  # vLLM also reads it here


class NestedV2Config(NestedV1Config):
    """`DFlash2DraftModel` with conv and selector keys in dflash_config."""

    model_config = MODEL_CONFIG | {"title": "DFlash2 drafter config (nested dialect)"}
    dflash_config: DFlashConfigV2
