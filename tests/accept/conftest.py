"""The accept tests need torch, triton and transformers; without them the directory is skipped, not failed."""

from __future__ import annotations

import importlib.util

collect_ignore_glob: list[str] = []
if any(importlib.util.find_spec(m) is None for m in ("torch", "triton", "transformers")):
    collect_ignore_glob = ["test_*.py"]
else:
    import torch

    torch.set_num_threads(1)  # Triton's mode: tests/conftest.py
