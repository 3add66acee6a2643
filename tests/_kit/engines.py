"""Sparse real-shape checkpoints from fixtures/real/ (published configs and tensor lists) for engine tests."""

from __future__ import annotations

from pathlib import Path

from conftest import REAL, real_config
from dflash2_ckpt.checkpoint.layout import expected_tensors
from dflash2_ckpt.dev.synth import materialise, read_tensor_list
from dflash2_ckpt.formats.parse import to_spec

REAL_NAMES = (
    "z-lab_Qwen3.8-27B-DFlash2",
    "z-lab_Muse-Glimmer-30B-DFlash2",
    "z-lab_Qwen3-4B-DFlash-b16",
    "speculators-0.9.0_tiny-dflash2",
    "deepseek-ai_dspark_qwen3_8b_block7",
)


def real_checkpoint(root: Path, name: str) -> Path:
    """The published tensor list where one is recorded, else the layout the config implies (sparse data)."""
    cfg = real_config(name)
    tsv = REAL / f"{name}.tensors.tsv"
    if tsv.exists():
        tensors = read_tensor_list(tsv)
    else:
        spec, _ = to_spec(cfg)
        tensors = (
            [(e.name, "BF16", e.shape) for e in expected_tensors(spec)]
            if spec
            else [("fc.weight", "BF16", (4, 4))]
        )
    return materialise(root / name, cfg, tensors)
