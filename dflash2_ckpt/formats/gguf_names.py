"""The one table of HF <-> GGUF names for DFlash / DFlash2 drafters served by llama.cpp.

Source: docs/engines.md (GGUF), paraphrasing the llama.cpp loader (ggml-org/llama.cpp:src/models/dflash.cpp
@01b78a15) and the gguf-py constants it names (DFLASH_ATTN_CONV_BASE, ...). The gguf package on the
registry (0.19.0) predates DFlash, so these names are defined here and nowhere else.
"""

from __future__ import annotations

import re

ARCH = "dflash"
FORK_ARCH = "dflash-draft"  # fork converters (llama.cpp#25116): refused by upstream

# HF nested tensor name -> GGUF tensor name; {N} is the draft layer index.
TENSORS: tuple[tuple[str, str], ...] = (
    ("fc.weight", "fc.weight"),
    ("hidden_norm.weight", "enc.output_norm.weight"),
    ("norm.weight", "output_norm.weight"),
    ("layers.{N}.input_layernorm.weight", "blk.{N}.attn_norm.weight"),
    ("layers.{N}.post_attention_layernorm.weight", "blk.{N}.ffn_norm.weight"),
    ("layers.{N}.self_attn.q_proj.weight", "blk.{N}.attn_q.weight"),
    ("layers.{N}.self_attn.k_proj.weight", "blk.{N}.attn_k.weight"),
    ("layers.{N}.self_attn.v_proj.weight", "blk.{N}.attn_v.weight"),
    ("layers.{N}.self_attn.o_proj.weight", "blk.{N}.attn_output.weight"),
    # biases exist only with attention_bias (a converter must not drop them: docs/engines.md (GGUF))
    ("layers.{N}.self_attn.q_proj.bias", "blk.{N}.attn_q.bias"),
    ("layers.{N}.self_attn.k_proj.bias", "blk.{N}.attn_k.bias"),
    ("layers.{N}.self_attn.v_proj.bias", "blk.{N}.attn_v.bias"),
    ("layers.{N}.self_attn.o_proj.bias", "blk.{N}.attn_output.bias"),
    ("layers.{N}.self_attn.q_norm.weight", "blk.{N}.attn_q_norm.weight"),
    ("layers.{N}.self_attn.k_norm.weight", "blk.{N}.attn_k_norm.weight"),
    # MiMo-style per-head attention sinks (dflash_config.attention_sink_bias; vLLM's parameter name), an
    # optional tensor of llama.cpp's dflash loader (llama.cpp b11434:src/models/dflash.cpp LLM_TENSOR_ATTN_SINKS)
    ("layers.{N}.self_attn.attention_sink_bias", "blk.{N}.attn_sinks.weight"),
    ("layers.{N}.mlp.gate_proj.weight", "blk.{N}.ffn_gate.weight"),
    ("layers.{N}.mlp.up_proj.weight", "blk.{N}.ffn_up.weight"),
    ("layers.{N}.mlp.down_proj.weight", "blk.{N}.ffn_down.weight"),
    ("layers.{N}.attention_conv.base_kernel", "blk.{N}.attn_conv_base"),
    ("layers.{N}.attention_conv.kernel_projection.weight", "blk.{N}.attn_conv_proj.weight"),
    ("layers.{N}.mlp_conv.base_kernel", "blk.{N}.ffn_conv_base"),
    ("layers.{N}.mlp_conv.kernel_projection.weight", "blk.{N}.ffn_conv_proj.weight"),
    ("candidate_selector.predecessor_codebook", "selector_predecessor.weight"),
    ("candidate_selector.successor_codebook", "selector_successor.weight"),
    ("candidate_selector.hidden_projection.weight", "selector_hidden.weight"),
)


def _k(name: str) -> str:
    return f"{ARCH}.{name}"


# GGUF metadata keys (docs/engines.md, GGUF), by the DraftSpec field they carry.
KEY_BLOCK_COUNT = _k("block_count")
KEY_CONTEXT = _k("context_length")
KEY_EMBED = _k("embedding_length")
KEY_FFN = _k("feed_forward_length")
KEY_VOCAB = _k("vocab_size")
KEY_HEADS = _k("attention.head_count")
KEY_HEADS_KV = _k("attention.head_count_kv")
KEY_KEY_LEN = _k("attention.key_length")
KEY_VALUE_LEN = _k("attention.value_length")
KEY_EPS = _k("attention.layer_norm_rms_epsilon")
KEY_CAUSAL = _k("attention.causal")
KEY_WINDOW = _k("attention.sliding_window")
KEY_WINDOW_PATTERN = _k("attention.sliding_window_pattern")
KEY_VALUE_SCALE = _k("attention.value_scale")  # dflash_config.attention_value_scale (llama.cpp b11434)
KEY_ROPE_BASE = _k("rope.freq_base")
KEY_ROPE_SCALING = _k("rope.scaling.")  # prefix: type, factor, original_context_length, ...
KEY_BLOCK_SIZE = _k("block_size")
KEY_CONV_KERNEL = _k("conv_kernel_size")
KEY_CONV_GROUP = _k("conv_group_size")
KEY_SEL_RANK = _k("selector_rank")
KEY_SEL_TOP_K = _k("selector_top_k")
KEY_TARGET_LAYERS = _k("target_layers")  # z-lab target_layer_ids + 1 (layer inputs)
KEY_EMBED_SCALE = _k("embedding_scale")
KEY_LOGIT_SCALE = _k("logit_scale")
KEY_SOFTCAP = _k("final_logit_softcapping")
KEY_MASK = "tokenizer.ggml.mask_token_id"
KEY_ARCH = "general.architecture"
KEY_FILE_TYPE = "general.file_type"
# ours, ignored by llama.cpp: the source config.json and safetensors __metadata__, so that a conversion
# back to HF writes the very same files
KEY_SOURCE_CONFIG = "dflash2_ckpt.source.config"
KEY_SOURCE_ST_META = "dflash2_ckpt.source.safetensors_metadata"
# {gguf tensor name: source dtype} for the tensors stored in another type (convert/gguf_dtypes.py)
KEY_SOURCE_DTYPES = "dflash2_ckpt.source.dtypes"
# the fingerprint of the target tokenizer the drafter was converted with (checkpoint/tokenizer.py)
KEY_TOKENIZER_SHA256 = "dflash2_ckpt.tokenizer.sha256"

V2_KEYS = {
    "conv_kernel_size": KEY_CONV_KERNEL,
    "conv_group_size": KEY_CONV_GROUP,
    "selector_rank": KEY_SEL_RANK,
    "selector_top_k": KEY_SEL_TOP_K,
}
# HF rope_scaling names -> llama.cpp's rope.scaling.* names
ROPE_SCALING_NAMES = {
    "rope_type": "type",
    "type": "type",
    "factor": "factor",
    "original_max_position_embeddings": "original_context_length",
}

# DraftSpec field -> the key it came from, for finding messages on a GGUF file
SPEC_PATHS = {
    "num_hidden_layers": KEY_BLOCK_COUNT,
    "max_position_embeddings": KEY_CONTEXT,
    "hidden_size": KEY_EMBED,
    "intermediate_size": KEY_FFN,
    "vocab_size": KEY_VOCAB,
    "num_attention_heads": KEY_HEADS,
    "num_key_value_heads": KEY_HEADS_KV,
    "head_dim": KEY_KEY_LEN,
    "rms_norm_eps": KEY_EPS,
    "is_causal": KEY_CAUSAL,
    "causal": KEY_CAUSAL,
    "sliding_window": KEY_WINDOW,
    "layer_types": KEY_WINDOW_PATTERN,
    "rope_theta": KEY_ROPE_BASE,
    "block_size": KEY_BLOCK_SIZE,
    "target_layer_ids": KEY_TARGET_LAYERS,
    "mask_token_id": KEY_MASK,
    "architectures": KEY_ARCH,
    "input_embedding_scale": KEY_EMBED_SCALE,
    "output_multiplier": KEY_LOGIT_SCALE,
    "final_logit_softcapping": KEY_SOFTCAP,
    **V2_KEYS,
}


def _compile(template: str) -> re.Pattern[str]:
    return re.compile("^" + re.escape(template).replace(re.escape("{N}"), r"(\d+)") + "$")


_HF = [(_compile(hf), gg) for hf, gg in TENSORS]
_GG = [(_compile(gg), hf) for hf, gg in TENSORS]


def _map(name: str, table: list[tuple[re.Pattern[str], str]]) -> str | None:
    for pattern, other in table:
        m = pattern.match(name)
        if m:
            return other.replace("{N}", m.group(1)) if m.groups() else other
    return None


def hf_to_gguf(name: str) -> str | None:
    """The GGUF name of an HF nested tensor, or None when llama.cpp has no tensor of that role."""
    return _map(name, _HF)


def gguf_to_hf(name: str) -> str | None:
    """The HF nested name of a GGUF tensor, or None when the name is not a DFlash tensor."""
    return _map(name, _GG)
