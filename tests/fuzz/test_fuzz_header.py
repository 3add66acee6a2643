"""Fuzz the safetensors header reader: random bytes, structured hostile headers, mutated valid files.

Every input either raises HeaderError or parses into a Header that honours the safetensors rules
(contiguous from 0, spans = elements x dtype size, the data exactly covered) - a parser that accepts
a lying header is as wrong as one that crashes.
"""

from __future__ import annotations

import json
import struct
from typing import Any

from fuzzkit import fuzz
from hypothesis import given
from hypothesis import strategies as st

from dflash2_ckpt.errors import HeaderError
from dflash2_ckpt.sources.safetensors_header import (
    DTYPE_BITS,
    Header,
    build_header,
    parse_header,
    parse_length,
)


def parse(blob: bytes) -> Header | None:
    try:
        n = parse_length(blob[:8], len(blob), file="f.safetensors")
        h = parse_header(blob[8 : 8 + n], header_len=n, file_size=len(blob), file="f.safetensors")
    except HeaderError:
        return None
    _check_invariants(h)
    return h


def _check_invariants(h: Header) -> None:
    cursor = h.data_start
    for t in h.tensors:
        assert t.begin == cursor and t.end >= t.begin
        assert t.numel * DTYPE_BITS[t.dtype] == 8 * t.nbytes
        cursor = t.end
    assert cursor == h.file_size
    assert h.metadata is None or all(isinstance(v, str) for v in h.metadata.values())


# -- inputs -----------------------------------------------------------------------------------------

BIG = [2**31, 2**32, 2**53 + 1, 2**63 - 1, 2**63, 2**64, 2**64 + 1, 10**30]
ints = st.one_of(st.integers(-3, 70), st.sampled_from(BIG), st.sampled_from([-(2**63), -1]))
json_scalars = st.one_of(
    st.none(), st.booleans(), ints, st.floats(allow_nan=False, allow_infinity=False), st.text(max_size=8)
)
json_values = st.recursive(
    json_scalars,
    lambda c: st.one_of(st.lists(c, max_size=4), st.dictionaries(st.text(max_size=6), c, max_size=4)),
    max_leaves=6,
)
dtypes = st.one_of(
    st.sampled_from(sorted(DTYPE_BITS)), st.sampled_from(["F33", "", "f32", "BF16 "]), json_values
)
shapes = st.one_of(st.lists(ints, max_size=4), json_values)
offsets = st.one_of(st.lists(ints, min_size=2, max_size=2), st.lists(ints, max_size=3), json_values)
entries = st.one_of(
    st.fixed_dictionaries({"dtype": dtypes, "shape": shapes, "data_offsets": offsets}),
    st.fixed_dictionaries(
        {
            "dtype": st.sampled_from(["F32", "BF16", "I8", "F4"]),
            "shape": st.lists(st.integers(0, 4), max_size=3),
            "data_offsets": st.lists(st.integers(0, 80), min_size=2, max_size=2),
        }
    ),
    json_values,
)
metadata = st.one_of(st.dictionaries(st.text(max_size=5), st.text(max_size=5), max_size=3), json_values)


@st.composite
def structured_files(draw: Any) -> bytes:
    header: dict[str, Any] = draw(st.dictionaries(st.text(max_size=6), entries, max_size=5))
    if draw(st.booleans()):
        header["__metadata__"] = draw(metadata)
    raw = json.dumps(header).encode()
    raw += b" " * draw(st.integers(0, 8))
    length = draw(st.one_of(st.just(len(raw)), st.integers(0, len(raw) + 16), st.sampled_from(BIG)))
    return struct.pack("<Q", length % 2**64) + raw + bytes(draw(st.integers(0, 96)))


valid_tensors = st.lists(
    st.tuples(
        st.text(alphabet="abc._0123", min_size=1, max_size=8),
        st.sampled_from(["F32", "BF16", "F16", "I8", "U8", "F4", "I64"]),
        st.lists(st.integers(0, 6), max_size=3).map(tuple),
    ),
    min_size=1,
    max_size=5,
    unique_by=lambda t: t[0],
)


@st.composite
def mutated_files(draw: Any) -> bytes:
    tensors = [t for t in draw(valid_tensors)]
    # F4 needs an even element count to fill whole bytes; build_header would emit half bytes otherwise
    tensors = [(n, d, s) for n, d, s in tensors if not (d == "F4" and _numel(s) % 2)]
    header, spans = build_header(tensors)
    blob = bytearray(header + bytes(spans[-1][1] if spans else 0))
    for _ in range(draw(st.integers(1, 4))):
        op = draw(st.sampled_from(["flip", "set", "insert", "delete", "truncate", "append", "length"]))
        pos = draw(st.integers(0, max(len(blob) - 1, 0)))
        if op == "flip" and blob:
            blob[pos] ^= 1 << draw(st.integers(0, 7))
        elif op == "set" and blob:
            blob[pos] = draw(
                st.sampled_from([0x00, 0x22, 0x2C, 0x2D, 0x5B, 0x5D, 0x7B, 0x7D, 0x80, 0xFF, 0x39])
            )
        elif op == "insert":
            blob[pos:pos] = draw(st.binary(min_size=1, max_size=6))
        elif op == "delete":
            del blob[pos : pos + draw(st.integers(1, 6))]
        elif op == "truncate":
            del blob[pos:]
        elif op == "append":
            blob += draw(st.binary(min_size=1, max_size=16))
        elif op == "length" and len(blob) >= 8:
            blob[0:8] = struct.pack(
                "<Q", draw(st.one_of(st.integers(0, 2 * len(blob)), st.sampled_from(BIG))) % 2**64
            )
    return bytes(blob)


def _numel(shape: tuple[int, ...]) -> int:
    n = 1
    for d in shape:
        n *= d
    return n


# -- properties -------------------------------------------------------------------------------------


@fuzz(1000)
@given(st.binary(max_size=200))
def test_random_bytes(blob: bytes) -> None:
    parse(blob)


@fuzz(1000)
@given(structured_files())
def test_structured_hostile_headers(blob: bytes) -> None:
    parse(blob)


@fuzz(1500)
@given(mutated_files())
def test_mutated_valid_files(blob: bytes) -> None:
    parse(blob)


@fuzz(300)
@given(valid_tensors)
def test_unmutated_files_still_parse(tensors: list[tuple[str, str, tuple[int, ...]]]) -> None:
    # the mutation test is only meaningful if its starting point is accepted
    tensors = [(n, d, s) for n, d, s in tensors if not (d == "F4" and _numel(s) % 2)]
    header, spans = build_header(tensors)
    assert parse(header + bytes(spans[-1][1] if spans else 0)) is not None
