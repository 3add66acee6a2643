"""The smoke tests need the [smoke] extra; without it the directory is skipped, not failed.

(Triton's interpreted mode on a machine without CUDA is chosen once for the suite in tests/conftest.py.)
"""

from __future__ import annotations

import importlib.util

collect_ignore_glob: list[str] = []
if importlib.util.find_spec("torch") is None or importlib.util.find_spec("triton") is None:
    collect_ignore_glob = ["test_*.py"]
else:
    import torch

    # tensors here are tiny; intra-op threads only add OpenMP spin-waits, which crawl on a shared box
    torch.set_num_threads(1)
