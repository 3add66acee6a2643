"""DF6xx that the broken fixtures do not cover: a shard the index does not list, a GGUF beside the weights."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from conftest import FIXTURES
from dflash2_ckpt.checkpoint import open_checkpoint
from dflash2_ckpt.checks.context import CheckContext
from dflash2_ckpt.checks.files import check
from dflash2_ckpt.usecases.verify import verify

GOOD = FIXTURES / "good" / "nested-v2"


def _copy(tmp_path: Path) -> Path:
    d = tmp_path / "ckpt"
    shutil.copytree(GOOD, d)
    return d


def test_a_shard_the_index_does_not_list_is_df609(tmp_path: Path) -> None:
    d = _copy(tmp_path)
    names = list(open_checkpoint(d).tensors)
    (d / "model.safetensors.index.json").write_text(
        json.dumps({"metadata": {}, "weight_map": {n: "model.safetensors" for n in names}})
    )
    shutil.copy(d / "model.safetensors", d / "model-extra.safetensors")
    found = [f for f in verify(d).findings if f.code.startswith("DF6")]
    assert [(f.code, f.file) for f in found] == [("DF609", "model-extra.safetensors")]


def test_a_gguf_file_is_noted_and_not_read(tmp_path: Path) -> None:
    d = _copy(tmp_path)
    (d / "drafter-Q8_0.gguf").write_bytes(b"GGUF" + b"\0" * 60)
    ckpt = open_checkpoint(d)
    found = check(CheckContext(ckpt))
    assert [(f.code, f.severity, f.file) for f in found] == [("DF912", "info", "drafter-Q8_0.gguf")]
    assert ckpt.bytes_read < (d / "model.safetensors").stat().st_size  # the GGUF was never opened
