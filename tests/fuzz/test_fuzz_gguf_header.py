"""Fuzz the GGUF header reader and the GGUF dialect behind it: random bytes, mutated valid files, and
structured headers with hostile counts, lengths and types.

Every input either raises HeaderError or parses into a header whose tensors lie inside the file, aligned,
without overlap, each span exactly what its type and shape need; opening it as a checkpoint never raises.
"""

from __future__ import annotations

import struct
import tempfile
from functools import lru_cache
from pathlib import Path

from fuzzkit import fuzz
from hypothesis import given
from hypothesis import strategies as st

from _kit.gguf import FIXTURES, to_gguf  # noqa: E402
from dflash2_ckpt.checkpoint import open_checkpoint
from dflash2_ckpt.errors import HeaderError
from dflash2_ckpt.sources.gguf_header import GGUFHeader, parse_gguf_header, tensor_nbytes
from dflash2_ckpt.usecases.verify import verify
from gguf import GGMLQuantizationType


@lru_cache(maxsize=1)
def valid() -> bytes:
    d = Path(tempfile.mkdtemp(prefix="dflash2-fuzz-gguf-"))
    return to_gguf(FIXTURES / "good" / "nested-v1", d / "v.gguf").read_bytes()


def parse(blob: bytes) -> GGUFHeader | None:
    try:
        h = parse_gguf_header(lambda s, n: blob[s : s + n], len(blob), "f.gguf")
    except HeaderError:
        return None
    spans = sorted((t.begin, t.end) for t in h.tensors)
    for t in h.tensors:
        assert t.offset % h.alignment == 0 and h.data_start <= t.begin <= t.end <= len(blob)
        assert t.nbytes == tensor_nbytes(t.ggml_type, t.ne)
    assert all(a[1] <= b[0] for a, b in zip(spans, spans[1:]))
    return h


@fuzz(500)
@given(st.binary(max_size=512))
def test_random_bytes(blob: bytes) -> None:
    parse(blob)
    parse(b"GGUF" + struct.pack("<I", 3) + blob)


@fuzz(400)
@given(st.data())
def test_mutated_valid_file(data: st.DataObject) -> None:
    blob = bytearray(valid())
    for _ in range(data.draw(st.integers(1, 8))):
        i = data.draw(st.integers(0, len(blob) - 1))
        blob[i] = data.draw(st.integers(0, 255))
    cut = data.draw(st.one_of(st.none(), st.integers(0, len(blob))))
    parse(bytes(blob if cut is None else blob[:cut]))


@fuzz(300)
@given(
    n_tensors=st.integers(0, 2**64 - 1),
    n_kv=st.integers(0, 2**64 - 1),
    key_len=st.integers(0, 2**64 - 1),
    vtype=st.integers(0, 2**32 - 1),
    tail=st.binary(max_size=64),
)
def test_structured_hostile_headers(n_tensors: int, n_kv: int, key_len: int, vtype: int, tail: bytes) -> None:
    blob = (
        b"GGUF"
        + struct.pack("<IQQQ", 3, n_tensors, n_kv, key_len)
        + b"k" * min(key_len, 16)
        + struct.pack("<I", vtype)
        + tail
    )
    parse(blob)


@fuzz(150)
@given(
    ne=st.lists(st.integers(0, 2**64 - 1), min_size=0, max_size=5),
    qtype=st.integers(0, 64),
    offset=st.integers(0, 2**64 - 1),
)
def test_hostile_tensor_infos(ne: list[int], qtype: int, offset: int) -> None:
    name = b"fc.weight"
    blob = (
        b"GGUF"
        + struct.pack("<IQQ", 3, 1, 0)
        + struct.pack("<Q", len(name))
        + name
        + struct.pack("<I", len(ne))
        + b"".join(struct.pack("<Q", d) for d in ne)
        + struct.pack("<IQ", qtype, offset)
    )
    blob += bytes(-len(blob) % 32) + bytes(256)
    h = parse(blob)
    if h is not None:
        assert isinstance(GGMLQuantizationType(h.tensors[0].ggml_type), GGMLQuantizationType)


@fuzz(60)
@given(st.data())
def test_checkpoint_never_raises_on_a_mutated_file(data: st.DataObject) -> None:
    blob = bytearray(valid())
    for _ in range(data.draw(st.integers(1, 4))):
        i = data.draw(st.integers(0, min(len(blob), 4096) - 1))  # the metadata region
        blob[i] = data.draw(st.integers(0, 255))
    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / "m.gguf"
        p.write_bytes(bytes(blob))
        ckpt = open_checkpoint(p)
        verify(ckpt)
