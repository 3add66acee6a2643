"""Quantized drafters from config and headers alone (no torch): schemes per module (config.py), how each
scheme stores a linear (storage.py), the logical view the layout checks run on (view.py), byte
accounting (accounting.py). Verdicts: checks/quant.py; dequantizing and comparing: dflash2_ckpt.diff."""
