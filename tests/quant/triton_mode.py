"""Import first in a test module that imports compressed-tensors: it imports triton, and triton fixes
interpreted vs compiled mode at its first import. tests/quant is collected before tests/smoke, so the
smoke tests' choice (tests/smoke/conftest.py: interpreted when there is no CUDA device) is made here
too, before anything imports triton. (A conftest.py here would shadow `from conftest import ...`.)"""
from __future__ import annotations

import importlib.util
import os

if importlib.util.find_spec("torch") is not None:
    import torch

    if not torch.cuda.is_available():
        os.environ.setdefault("TRITON_INTERPRET", "1")
