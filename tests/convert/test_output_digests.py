"""Every conversion writes the same bytes as before the writers stopped reading their output back (and the
GGUF header started splicing its long arrays): sha256 of every file each conversion of the fixtures
writes, against tests/convert/output_digests.json, recorded from main at 7aaf2fd with the earlier writers.
A change that alters an output on purpose re-records the file (run this module's `record()`)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from dflash2_ckpt.convert import convert
from dflash2_ckpt.convert.from_gguf import convert_from_gguf
from dflash2_ckpt.convert.to_gguf import convert_to_gguf

ROOT = Path(__file__).resolve().parents[2]
F = ROOT / "fixtures"
T = F / "targets" / "tiny-target"
GOLDEN = Path(__file__).with_name("output_digests.json")
V: dict[str, Any] = dict(verifier_name="a/b", verifier_architectures=("Qwen3ForCausalLM",))

JOBS: dict[str, Callable[[Path], object]] = {
    "nested-v2>flat": lambda o: convert(F / "good/nested-v2", o, to="flat", **V),
    "nested-v1>flat": lambda o: convert(F / "good/nested-v1", o, to="flat", **V),
    "flat-v2>nested": lambda o: convert(F / "good/flat-v2", o, to="nested"),
    "flat-v1>nested": lambda o: convert(F / "good/flat-v1", o, to="nested"),
    "assistant-v1>nested": lambda o: convert(F / "good/assistant-v1", o, to="nested", target=T),
    **{
        f"{q}>flat": (lambda o, q=q: convert(F / "quantized" / q, o, to="flat", **V))  # type: ignore[misc]
        for q in ("w4a16", "w8a16", "fp8", "nvfp4")
    },
    "nested-v2>gguf": lambda o: convert_to_gguf(F / "good/nested-v2", o, target=T),
    "nested-v2>gguf-q8": lambda o: convert_to_gguf(F / "good/nested-v2", o, target=T, outtype="q8_0"),
    "nested-v2>gguf-f32": lambda o: convert_to_gguf(F / "good/nested-v2", o, target=T, outtype="f32"),
    "gguf-fixture>nested": lambda o: convert_from_gguf(F / "gguf/drafter-v2.gguf", o, to="nested"),
    "gguf-fixture>flat": lambda o: convert_from_gguf(F / "gguf/drafter-v2.gguf", o, to="flat", **V),
}


def _tree(p: Path) -> dict[str, str]:
    files = [p] if p.is_file() else sorted(x for x in p.rglob("*") if x.is_file())
    return {
        str(f.relative_to(p.parent if p.is_file() else p)): hashlib.sha256(f.read_bytes()).hexdigest()
        for f in files
    }


def _run(name: str, d: Path) -> dict[str, str]:
    out = d / (name.replace(">", "_") + (".gguf" if "gguf" in name.split(">")[1] else ""))
    JOBS[name](out)
    return _tree(out)


@pytest.mark.parametrize("name", sorted(JOBS))
def test_output_bytes_unchanged(name: str, tmp_path: Path) -> None:
    assert _run(name, tmp_path) == json.loads(GOLDEN.read_text())[name]


def test_q8_0_round_trip_unchanged(tmp_path: Path) -> None:
    g = tmp_path / "q8.gguf"
    convert_to_gguf(F / "good/nested-v2", g, target=T, outtype="q8_0")
    convert_from_gguf(g, tmp_path / "back", to="nested")
    assert _tree(tmp_path / "back") == json.loads(GOLDEN.read_text())["q8_0>nested"]


def record() -> None:  # pragma: no cover - run by hand when an output changes on purpose
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        golden = json.loads(GOLDEN.read_text())
        golden.update({n: _run(n, Path(d)) for n in JOBS})
        GOLDEN.write_text(json.dumps(golden, indent=1, sort_keys=True) + "\n")
