"""The smoke tests need the [smoke] extra; without it the directory is skipped, not failed.

Triton picks interpreted vs compiled mode when it is first imported, so the switch is set here,
before any test module imports it, whenever there is no CUDA device.
"""
from __future__ import annotations

import importlib.util
import os

collect_ignore_glob: list[str] = []
if importlib.util.find_spec("torch") is None or importlib.util.find_spec("triton") is None:
    collect_ignore_glob = ["test_*.py"]
else:
    import torch

    if not torch.cuda.is_available():
        os.environ.setdefault("TRITON_INTERPRET", "1")
    # tensors here are tiny; intra-op threads only add OpenMP spin-waits, which crawl on a shared box
    torch.set_num_threads(1)
