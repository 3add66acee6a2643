"""diff with a GGUF file on either side: exact copies are equal, q8_0 is rounding noise, damage is found."""
from __future__ import annotations

from pathlib import Path

import pytest

from _kit.gguf import FIXTURES, header_of, to_gguf

pytest.importorskip("torch")
from dflash2_ckpt.diff import diff  # noqa: E402

SRC = FIXTURES / "good" / "nested-v2"


def _verdicts(result: object) -> dict[str, str]:
    return {f.name: f.verdict for f in result.figures}   # type: ignore[attr-defined]


def test_exact_gguf_equals_its_source_both_ways(tmp_path: Path) -> None:
    g = to_gguf(SRC, tmp_path / "d.gguf")
    for derived, reference in ((g, SRC), (SRC, g)):
        r = diff(str(derived), str(reference))
        assert not r.failed() and set(_verdicts(r).values()) == {"equal"}, _verdicts(r)
        assert len(r.figures) == len(header_of(g).tensors)


def test_q8_0_is_quantization_noise(tmp_path: Path) -> None:
    g = to_gguf(SRC, tmp_path / "q8.gguf", outtype="q8_0")
    r = diff(str(g), str(SRC))
    v = _verdicts(r)
    assert not r.failed(), v
    assert "quantization-noise" in v.values() and "different" not in v.values()


def test_a_damaged_gguf_tensor_is_different(tmp_path: Path) -> None:
    g = to_gguf(SRC, tmp_path / "d.gguf")
    h = header_of(g)
    fc = next(t for t in h.tensors if t.name == "fc.weight")
    raw = bytearray(g.read_bytes())
    raw[fc.begin:fc.end] = bytes(reversed(raw[fc.begin:fc.end]))       # same values, scrambled
    g.write_bytes(bytes(raw))
    r = diff(str(g), str(SRC))
    assert r.failed() and _verdicts(r)["fc.weight"] == "different"
