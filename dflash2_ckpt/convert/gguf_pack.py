"""Long metadata arrays (the vocabulary, its merges, its token types) packed once, in bulk, and spliced into
the header the gguf package's GGUFWriter writes for everything else.

GGUFWriter packs an array element by element through several Python calls each (about 1.5 s for a
248k-token vocabulary and its 247k merges on this machine, most of a --to gguf header). The bytes are the
GGUF array layout (ggml docs/gguf.md: u32 element type, u64 count, then each element; a string is a u64
length and its bytes), so a long array is packed here in one join, or, copied from a target GGUF with
--tokenizer-from, taken as the very bytes that file holds (RawArray), never decoded and re-encoded. The
writer is given a one-byte placeholder in the array's place, which keeps its key order, and the packed
bytes replace the placeholder in its output. The result is byte-identical to the writer's own packing
(tests/gguf/test_gguf_pack.py compares the two).
"""

from __future__ import annotations

import struct
from collections.abc import Iterator, Sequence
from typing import Any

from gguf.constants import GGUFEndian
from gguf.gguf_writer import GGUFValue

from gguf import GGUFValueType, GGUFWriter

from ..errors import ConversionError

LONG = 1024  # arrays longer than this are packed here
_SCALAR = {
    GGUFValueType.UINT8: "B",
    GGUFValueType.INT8: "b",
    GGUFValueType.UINT16: "H",
    GGUFValueType.INT16: "h",
    GGUFValueType.UINT32: "I",
    GGUFValueType.INT32: "i",
    GGUFValueType.FLOAT32: "f",
    GGUFValueType.BOOL: "?",
    GGUFValueType.UINT64: "Q",
    GGUFValueType.INT64: "q",
    GGUFValueType.FLOAT64: "d",
}
_PLACEHOLDER = struct.pack("<IIQ", GGUFValueType.ARRAY, GGUFValueType.UINT8, 1) + b"\0"


class RawArray(Sequence[Any]):
    """An array copied from another GGUF as its bytes (u64 count + elements). As a sequence it gives the
    elements in the form GGUFWriter packs (strings as bytes), so a writer that never splices still
    writes the same bytes, only slower."""

    def __init__(self, body: bytes, sub: GGUFValueType, items: Sequence[Any]) -> None:
        self.body, self.sub, self._items = body, sub, items

    def __len__(self) -> int:
        return len(self._items)

    def __getitem__(self, i: Any) -> Any:
        v = self._items[i]
        if self.sub == GGUFValueType.STRING:
            return (
                [x.encode("utf-8", errors="surrogateescape") for x in v]
                if isinstance(i, slice)
                else v.encode("utf-8", errors="surrogateescape")
            )
        return v

    def __iter__(self) -> Iterator[Any]:
        return (self[i] for i in range(len(self)))


def _element_type(val: GGUFValue) -> GGUFValueType:
    """The element type as GGUFWriter._pack_val chooses it: sub_type, else bytes -> UINT8, else the first item's."""
    if val.sub_type is not None:
        return val.sub_type
    if isinstance(val.value, (bytes, bytearray)):
        return GGUFValueType.UINT8
    first = GGUFValueType.get_type(val.value[0])
    if any(GGUFValueType.get_type(v) is not first for v in val.value):
        raise ConversionError("internal: a GGUF metadata array mixes element types")
    return first


def _body(values: Sequence[Any], sub: GGUFValueType) -> bytes:
    """u64 count + elements, little-endian, as GGUF stores them."""
    n = struct.pack("<Q", len(values))
    if sub == GGUFValueType.STRING:
        enc = [v.encode("utf-8") if isinstance(v, str) else bytes(v) for v in values]
        lens = struct.pack(f"<{len(enc)}Q", *map(len, enc))
        return n + b"".join(lens[8 * i : 8 * i + 8] + e for i, e in enumerate(enc))
    if sub in _SCALAR:
        return n + struct.pack(f"<{len(values)}{_SCALAR[sub]}", *values)
    raise ConversionError(f"internal: a GGUF metadata array of {sub.name} elements")


def take_long_arrays(w: GGUFWriter) -> dict[str, tuple[GGUFValueType, bytes]]:
    """Replace each long array of the writer's metadata by a placeholder; returns what splice() puts back."""
    if w.endianess != GGUFEndian.LITTLE or len(w.kv_data) != 1:
        return {}
    out = {}
    for key, val in w.kv_data[0].items():
        if val.type != GGUFValueType.ARRAY or not isinstance(val.value, Sequence) or len(val.value) <= LONG:
            continue
        sub = _element_type(val)
        body = (
            val.value.body
            if isinstance(val.value, RawArray) and val.value.sub == sub
            else _body(val.value, sub)
        )
        out[key] = (sub, body)
        w.kv_data[0][key] = GGUFValue([0], GGUFValueType.ARRAY, sub_type=GGUFValueType.UINT8)
    return out


def splice(raw: bytes, packed: dict[str, tuple[GGUFValueType, bytes]]) -> bytes:
    """The writer's output with each placeholder replaced by its packed array. Every placeholder is found
    in the writer's output before anything is spliced in, so no spliced byte is ever searched."""
    places = []
    for key, (sub, body) in packed.items():
        k = key.encode("utf-8")
        at_key = struct.pack("<Q", len(k)) + k
        pattern = at_key + _PLACEHOLDER
        at = raw.find(pattern)
        if at < 0 or raw.find(pattern, at + 1) >= 0:
            raise ConversionError(
                f"internal: the placeholder of {key} is not found exactly once in the header"
            )
        places.append((at + len(at_key), struct.pack("<II", GGUFValueType.ARRAY, sub) + body))
    out, pos = [], 0
    for start, data in sorted(places):
        out += [raw[pos:start], data]
        pos = start + len(_PLACEHOLDER)
    out.append(raw[pos:])
    return b"".join(out)
