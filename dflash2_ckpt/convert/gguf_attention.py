"""MiMo-style attention keys (dflash_config.use_swa / swa_window_size / attention_sink_bias) in a GGUF.

llama.cpp has a home for each: the sliding window is `dflash.attention.sliding_window` with a per-layer
`sliding_window_pattern`, and the per-head sinks are the optional `blk.N.attn_sinks.weight` tensors
(llama.cpp b11434:src/models/dflash.cpp). So they are carried, with the meaning vLLM's DFlash gives them
(vllm 0.27.1..0.34.0:vllm/model_executor/models/qwen3_dflash.py `_resolve_layer_attention`): use_swa
makes every layer of an all-full layer_types slide with swa_window_size (else sliding_window), while the
causality still follows the original layer types. What one GGUF cannot say is refused.
"""

from __future__ import annotations

from dataclasses import replace

from ..engines.causality import intended as intended_causality
from ..errors import ConversionError
from ..formats.spec import CausalityKeys, DraftSpec, LayerType

SINK_SUFFIXES = (".self_attn.attention_sink_bias", ".self_attn.sinks")


def gguf_view(spec: DraftSpec, tensors: list[str], notes: list[str]) -> DraftSpec:
    """The drafter as the GGUF must describe it; raises ConversionError when no GGUF describes it."""
    extra = spec.drafter_extra
    sinks = [n for n in tensors if n.endswith(SINK_SUFFIXES)]
    if sinks and extra.get("attention_sink_bias") is not True:
        raise ConversionError(
            f"{sinks[0]} is an attention-sink tensor but dflash_config.attention_sink_bias is not "
            "true: vLLM builds no sinks for it while llama.cpp would apply them, so the GGUF "
            "would run another attention",
            hint="set dflash_config.attention_sink_bias to true "
            "if the drafter was trained with sinks, else remove the tensors",
        )
    if not extra.get("use_swa"):
        return spec
    if any(t == "sliding_attention" for t in spec.layer_types):
        raise ConversionError(
            "dflash_config.use_swa with sliding layers in layer_types: vLLM then slides the layers "
            "layer_types names, llama.cpp's converter slides every layer; one GGUF pattern cannot "
            "say which the drafter was trained with",
            hint="drop use_swa, or list every layer as sliding_attention in layer_types",
        )
    window = extra.get("swa_window_size") or spec.sliding_window
    if not isinstance(window, int) or window <= 0:
        raise ConversionError(
            "dflash_config.use_swa without a window (swa_window_size or sliding_window)",
            hint="set dflash_config.swa_window_size to the window the drafter was trained with",
        )
    per = intended_causality(spec)
    if len(set(per)) != 1:
        raise ConversionError(
            "dflash_config.use_swa with layers of different causality: one GGUF causal flag cannot say it"
        )
    notes.append(
        f"dflash_config.use_swa: every layer slides with a window of {window} (written as "
        "dflash.attention.sliding_window and an all-true sliding_window_pattern)"
    )
    one: LayerType = "sliding_attention"
    sliding: tuple[LayerType | None, ...] = (one,) * spec.num_hidden_layers
    return replace(
        spec, layer_types=sliding, sliding_window=window, causality=CausalityKeys(is_causal=per[0])
    )


def as_read_by_llama_cpp(spec: DraftSpec) -> DraftSpec:
    """An HF spec as its GGUF would describe it (itself where no GGUF can): to compare the two directions."""
    try:
        return gguf_view(spec, [], [])
    except ConversionError:
        return spec
