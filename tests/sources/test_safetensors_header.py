"""The bounded header reader: valid headers round-trip; every malformed one is a HeaderError, nothing else."""

from __future__ import annotations

import json
import struct

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dflash2_ckpt.errors import HeaderError
from dflash2_ckpt.sources.safetensors_header import (
    DTYPE_BITS,
    MAX_HEADER_BYTES,
    build_header,
    parse_header,
    parse_length,
)

DTYPES = ["F32", "BF16", "F16", "I8", "I64", "U8"]
tensor_lists = st.lists(
    st.tuples(
        st.text(alphabet="abcdefghij._0123456789", min_size=1, max_size=12),
        st.sampled_from(DTYPES),
        st.lists(st.integers(0, 5), max_size=3).map(tuple),
    ),
    max_size=6,
    unique_by=lambda t: t[0],
)


def parse_file(blob: bytes):
    n = parse_length(blob[:8], len(blob))
    return parse_header(blob[8 : 8 + n], header_len=n, file_size=len(blob))


def make(tensors, metadata=None) -> bytes:
    header, spans = build_header(tensors, metadata)
    return header + bytes(spans[-1][1] if spans else 0)


@given(
    tensor_lists, st.one_of(st.none(), st.dictionaries(st.text(max_size=5), st.text(max_size=5), max_size=3))
)
def test_generated_headers_round_trip(tensors, metadata) -> None:
    h = parse_file(make(tensors, metadata))
    got = {t.name: (t.dtype, t.shape, t.nbytes) for t in h.tensors}
    assert got == {n: (d, s, _nbytes(d, s)) for n, d, s in tensors}
    assert (h.metadata or None) == (metadata or None)


def _nbytes(dtype: str, shape: tuple[int, ...]) -> int:
    n = 1
    for d in shape:
        n *= d
    return n * DTYPE_BITS[dtype] // 8


def test_matches_the_safetensors_library(tmp_path) -> None:
    np = pytest.importorskip("numpy")
    from safetensors.numpy import save_file

    arrays = {
        "a": np.zeros((3, 4), np.float32),
        "b": np.ones((5,), np.int64),
        "c": np.zeros((0, 2), np.float16),
    }
    save_file(arrays, tmp_path / "x.safetensors", metadata={"format": "pt"})
    h = parse_file((tmp_path / "x.safetensors").read_bytes())
    assert {t.name: (t.dtype, t.shape) for t in h.tensors} == {
        "a": ("F32", (3, 4)),
        "b": ("I64", (5,)),
        "c": ("F16", (0, 2)),
    }
    assert h.metadata == {"format": "pt"}


@settings(max_examples=300)
@given(tensor_lists.filter(bool), st.data())
def test_mutated_bytes_raise_only_header_errors(tensors, data) -> None:
    blob = bytearray(make(tensors))
    for _ in range(data.draw(st.integers(1, 4))):
        i = data.draw(st.integers(0, len(blob) - 1))
        blob[i] = data.draw(st.integers(0, 255))
    cut = data.draw(st.integers(0, len(blob)))
    try:
        parse_file(bytes(blob[:cut]))
    except HeaderError:
        pass


def _raw(obj: dict, data: int = 0, length: int | None = None) -> bytes:
    body = json.dumps(obj).encode()
    return struct.pack("<Q", len(body) if length is None else length) + body + bytes(data)


@pytest.mark.parametrize(
    "blob,needle",
    [
        (b"\x01\x02", "shorter than the 8-byte"),
        (struct.pack("<Q", MAX_HEADER_BYTES + 1) + b"{}", "exceeds"),
        (struct.pack("<Q", 50) + b"{}", "runs past the end"),
        (struct.pack("<Q", 4) + b"\xff\xfe{}", "not UTF-8"),
        (struct.pack("<Q", 2) + b"[]", "not an object"),
        (struct.pack("<Q", 5) + b"{nope", "not valid JSON"),
        (
            _raw({"a": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}}, 4)[:8]
            + b'{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}',
            None,
        ),
        (_raw({"a": {"dtype": "Q9", "shape": [1], "data_offsets": [0, 4]}}, 4), "unknown dtype"),
        (_raw({"a": {"dtype": "F32", "shape": [-1], "data_offsets": [0, 4]}}, 4), "non-negative"),
        (_raw({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 4]}}, 4), "needs 8 bytes"),
        (
            _raw(
                {
                    "a": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]},
                    "b": {"dtype": "F32", "shape": [1], "data_offsets": [2, 6]},
                },
                6,
            ),
            "overlaps",
        ),
        (_raw({"a": {"dtype": "F32", "shape": [1], "data_offsets": [4, 8]}}, 8), "gap"),
        (_raw({"a": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}}, 2), "holds 2"),
        (_raw({"a": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}}, 9), "not described"),
        (_raw({"a": {"dtype": "F32", "shape": [1], "data_offsets": [-4, 0]}}, 0), "data_offsets"),
        (_raw({"__metadata__": {"k": 1}}, 0), "__metadata__"),
        (_raw({"a": {"dtype": "F32", "shape": [2**62, 2**62], "data_offsets": [0, 4]}}, 4), "needs"),
    ],
)
def test_each_lie_is_refused(blob: bytes, needle: str | None) -> None:
    if needle is None:  # duplicate tensor names
        blob = struct.pack("<Q", len(blob) - 8) + blob[8:]
        needle = "duplicate"
    with pytest.raises(HeaderError, match=needle):
        parse_file(blob)
