"""Fuzz open_checkpoint / verify end to end on real directories with mutated config and header bytes.

Each example copies a good fixture (single file or two shards with an index) into a fresh temporary
directory, corrupts bytes of config.json, of a shard's length prefix and JSON header, or of the index,
and runs the CLI's path: verify() on the directory, then both renderers. Only typed errors
(Dflash2Error) may escape, and they are what the CLI turns into exit 3.
"""

from __future__ import annotations

import atexit
import io
import json
import shutil
import struct
import tempfile
from pathlib import Path
from typing import Any

from fuzzkit import fuzz
from hypothesis import given
from hypothesis import strategies as st
from rich.console import Console

from dflash2_ckpt.errors import Dflash2Error
from dflash2_ckpt.report import render_json, render_text
from dflash2_ckpt.usecases.verify import verify

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
BASES = sorted(p.name for p in (FIXTURES / "good").iterdir())


def _sharded_copy(src: Path, dst: Path) -> None:
    """The fixture re-written as two shards plus an index (the same tensors and bytes)."""
    from dflash2_ckpt.checkpoint import Checkpoint, read_header
    from dflash2_ckpt.dev.synth import write_sharded
    from dflash2_ckpt.sources import LocalSource

    shutil.copytree(src, dst)
    h = read_header(Checkpoint(LocalSource(dst)), "model.safetensors")
    blob = (dst / "model.safetensors").read_bytes()
    data = {t.name: blob[t.begin : t.end] for t in h.tensors}
    (dst / "model.safetensors").unlink()
    write_sharded(dst, [(t.name, t.dtype, t.shape) for t in h.tensors], 2, lambda n, _: data[n])


# Built once per session: the mutation step then only copies and edits a ~100 KB directory.
_TEMPLATES = Path(tempfile.mkdtemp(prefix="dflash2-fuzz-templates-"))
atexit.register(shutil.rmtree, _TEMPLATES, True)
for _b in BASES:
    shutil.copytree(FIXTURES / "good" / _b, _TEMPLATES / _b)
_sharded_copy(FIXTURES / "good" / "nested-v2", _TEMPLATES / "nested-v2-sharded")
TEMPLATES = sorted(p.name for p in _TEMPLATES.iterdir())


def _mutate_bytes(draw: Any, blob: bytearray, lo: int, hi: int) -> None:
    """1-3 byte edits inside blob[lo:hi] (the region under attack)."""
    hi = max(lo + 1, min(hi, len(blob)))
    for _ in range(draw(st.integers(1, 3))):
        pos = draw(st.integers(lo, hi - 1)) if len(blob) > lo else len(blob)
        op = draw(st.sampled_from(["set", "flip", "insert", "delete"]))
        if op == "set" and pos < len(blob):
            blob[pos] = draw(
                st.sampled_from([0x00, 0x22, 0x2C, 0x2D, 0x30, 0x39, 0x5B, 0x5D, 0x7B, 0x7D, 0xFF])
            )
        elif op == "flip" and pos < len(blob):
            blob[pos] ^= 1 << draw(st.integers(0, 7))
        elif op == "insert":
            blob[pos:pos] = draw(st.binary(min_size=1, max_size=4))
        else:
            del blob[pos : pos + draw(st.integers(1, 4))]


@st.composite
def mutations(draw: Any) -> tuple[str, list[tuple[str, bytes]]]:
    """A template name and the files to overwrite in the copy: (name, new bytes)."""
    base = draw(st.sampled_from(TEMPLATES))
    root = _TEMPLATES / base
    weights = sorted(p.name for p in root.glob("*.safetensors"))
    edits = []
    for _ in range(draw(st.integers(1, 2))):
        target = draw(st.sampled_from(["config", "header", "length", "index"]))
        if target == "config":
            blob = bytearray((root / "config.json").read_bytes())
            _mutate_bytes(draw, blob, 0, len(blob))
            edits.append(("config.json", bytes(blob)))
        elif target == "index" and (root / "model.safetensors.index.json").exists():
            blob = bytearray((root / "model.safetensors.index.json").read_bytes())
            _mutate_bytes(draw, blob, 0, len(blob))
            edits.append(("model.safetensors.index.json", bytes(blob)))
        else:
            name = draw(st.sampled_from(weights))
            blob = bytearray((root / name).read_bytes())
            (n,) = struct.unpack("<Q", blob[:8])
            if target == "length":
                new = draw(st.one_of(st.integers(0, n + 64), st.sampled_from([2**63, 2**64 - 1, 10**8])))
                blob[:8] = struct.pack("<Q", new)
            else:
                _mutate_bytes(draw, blob, 8, 8 + n)
            edits.append((name, bytes(blob)))
    return base, edits


def run_case(base: str, edits: list[tuple[str, bytes]], scan: bool) -> None:
    with tempfile.TemporaryDirectory(prefix="dflash2-fuzz-") as tmp:
        d = Path(tmp) / "ckpt"
        shutil.copytree(_TEMPLATES / base, d)
        for name, blob in edits:
            (d / name).write_bytes(blob)
        try:
            report = verify(d, scan=scan)
        except Dflash2Error:
            return
        json.loads(render_json(report))
        render_text(report, Console(file=io.StringIO(), width=120))


@fuzz(500)
@given(mutations(), st.booleans())
def test_mutated_checkpoint_directories(case: tuple[str, list[tuple[str, bytes]]], scan: bool) -> None:
    run_case(*case, scan=scan)


def test_templates_are_clean() -> None:
    for base in TEMPLATES:
        report = verify(_TEMPLATES / base, scan=True)
        assert not report.failed(), (base, [(f.code, f.message) for f in report.findings])
