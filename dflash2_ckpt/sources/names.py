"""The file names a checkpoint is made of, in one place for every layer that looks for them."""
from __future__ import annotations

CONFIG = "config.json"
INDEX = "model.safetensors.index.json"              # the shard index: tensor name -> shard file
HF_QUANT_CONFIG = "hf_quant_config.json"            # NVIDIA ModelOpt's quantization config beside config.json
PICKLE_SUFFIXES = (".bin", ".pt", ".pth", ".ckpt", ".pkl")   # weights that would run code when loaded
