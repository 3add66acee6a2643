"""The file names a checkpoint is made of, in one place for every layer that looks for them."""

from __future__ import annotations

CONFIG = "config.json"
INDEX = "model.safetensors.index.json"  # the shard index: tensor name -> shard file
HF_QUANT_CONFIG = "hf_quant_config.json"  # NVIDIA ModelOpt's quantization config beside config.json
PICKLE_SUFFIXES = (".bin", ".pt", ".pth", ".ckpt", ".pkl")  # weights that would run code when loaded
GENERATION_CONFIG = "generation_config.json"
# the files a checkpoint directory is made of, beside config.json: weights, their index, tokenizer and
# generation files; a report written over one of them would destroy the checkpoint being checked
CHECKPOINT_SUFFIXES = (".safetensors", ".gguf", *PICKLE_SUFFIXES)
CHECKPOINT_NAMES = (
    CONFIG,
    INDEX,
    HF_QUANT_CONFIG,
    GENERATION_CONFIG,
    "special_tokens_map.json",
    "vocab.json",
    "merges.txt",
    "chat_template.jinja",
)


def is_checkpoint_file(name: str) -> bool:
    return name in CHECKPOINT_NAMES or name.endswith(CHECKPOINT_SUFFIXES) or name.startswith("tokenizer")
