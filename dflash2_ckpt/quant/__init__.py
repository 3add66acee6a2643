"""Quantized drafters from config and headers alone (no torch): schemes per module (config.py), how each
scheme stores a linear (storage.py). The logical view the layout checks run on is
checkpoint/quant.py, byte accounting checkpoint/accounting.py. Verdicts: checks/quant.py; dequantizing and comparing: dflash2_ckpt.diff."""
