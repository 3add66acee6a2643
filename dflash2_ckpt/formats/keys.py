"""Config keys every dialect treats alike; no pydantic here, so the fast parse (formats/fast.py) can read them."""

from __future__ import annotations

# Standard Hugging Face keys a drafter config carries that no DFlash rule reads; kept, not reported.
# the target tokenizer's fingerprint convert --target records (checkpoint/tokenizer.py); engines ignore it
# like any key their config class does not name
TOKENIZER_KEY = "dflash2_ckpt_tokenizer_sha256"
# keys this toolkit writes itself: kept, not reported as unknown
OWN_KEYS = frozenset({TOKENIZER_KEY})

STANDARD_HF_KEYS = frozenset(
    {
        "bos_token_id",
        "eos_token_id",
        "pad_token_id",
        "initializer_range",
        "attention_dropout",
        "use_cache",
        "transformers_version",
        "model_type",
        "dtype",
        "torch_dtype",
        "tie_word_embeddings",
        "use_sliding_window",
        "max_window_layers",
        "rope_scaling",
        "partial_rotary_factor",
        "name_or_path",
        "_name_or_path",
        "output_attentions",
        "output_hidden_states",
        "return_dict",
        "chunk_size_feed_forward",
        "is_encoder_decoder",
        "layer_norm_eps",
        "sep_token_id",
        "decoder_start_token_id",
        "auto_map",
        "quantization_config",
        "quantization",  # read by the loaders' quantizers; checked by checks/quant.py
    }
)
