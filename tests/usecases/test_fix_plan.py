"""The fix plan where the CLI cannot reach it: a rename whose header would grow is refused, not written."""

from __future__ import annotations

import shutil
from pathlib import Path

from conftest import FIXTURES
from dflash2_ckpt.checkpoint import open_checkpoint
from dflash2_ckpt.findings import Finding
from dflash2_ckpt.sources import LocalSource
from dflash2_ckpt.usecases.fix import plan


def test_a_rename_that_would_move_the_data_is_refused_with_the_convert_command(tmp_path: Path) -> None:
    d = tmp_path / "ckpt"
    shutil.copytree(FIXTURES / "good" / "nested-v2", d)
    ckpt = open_checkpoint(LocalSource(d))
    longer = Finding("DF202", "renamed", tensor="fc.weight", details={"rename_to": "x" * 200 + ".fc.weight"})
    shorter = Finding("DF202", "renamed", tensor="norm.weight", details={"rename_to": "n.weight"})
    p = plan([longer], ckpt)
    assert p.files == {} and p.applied == []
    assert (
        f"dflash2-ckpt convert {d.resolve()} --to nested -o OUT" in p.refused[0]
        and "model.safetensors" in p.refused[0]
    )
    p = plan([shorter], ckpt)
    [(old, new)] = p.files.values()
    assert len(old) == len(new) and p.applied == [shorter]
