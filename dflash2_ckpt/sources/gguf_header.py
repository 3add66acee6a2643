"""Bounded GGUF header reading over any Source: local files and Hub Range reads, never tensor data.

Layout (ggml's docs/gguf.md; constants from the `gguf` package): magic "GGUF", uint32 version (2 or 3),
uint64 tensor count, uint64 key/value count, the key/value pairs, the tensor infos (name, n_dims,
ne[n_dims], ggml type, offset relative to the data section), padding to `general.alignment`, data.

The gguf package's GGUFReader memory-maps a whole local file, trusts every count and builds a field object
with numpy views for every array element (two per token: 16 s of CPU for a 248k-token vocabulary with its
merges, measured in bench/RESULTS.md), so it cannot serve a bounded, header-only verify; here the header is
pulled through `read_range` in chunks that grow as needed (a vocabulary makes a header several MB), every
count and length is capped before anything is allocated, and each tensor's span is checked against its
type's block size, the alignment, the other tensors and the file's end. A header that breaks a rule is a
HeaderError with the byte offset, never a traceback. Long arrays (the tokenizer's) are stepped over with
their lengths validated and decoded only if a caller reads them (LazyArray).
"""

from __future__ import annotations

import math
import struct
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from gguf.constants import GGUF_DEFAULT_ALIGNMENT, GGUF_MAGIC

from gguf import GGML_QUANT_SIZES, GGMLQuantizationType, GGUFValueType

from ..errors import HeaderError

# Caps, far above any real drafter (a 248k-token vocabulary with merges is about 10 MB of header).
MAX_HEADER_BYTES = 128 << 20
MAX_TENSORS = 1 << 16
MAX_KV = 1 << 16
MAX_STRING = 16 << 20
MAX_ARRAY = 1 << 21  # elements in one array (vocabularies: up to ~262k tokens, ~500k merges)
MAX_ARRAY_TOTAL = 1 << 23  # elements in all arrays together
MAX_DIMS = 4  # GGML_MAX_DIMS
FIRST_CHUNK = 16 << 10
MAX_CHUNK = 2 << 20  # bounds what a Range read may fetch past the header
LAZY_MIN = 1024  # arrays longer than this are stepped over, their values read on first use

_SCALARS: dict[GGUFValueType, str] = {
    GGUFValueType.UINT8: "<B",
    GGUFValueType.INT8: "<b",
    GGUFValueType.UINT16: "<H",
    GGUFValueType.INT16: "<h",
    GGUFValueType.UINT32: "<I",
    GGUFValueType.INT32: "<i",
    GGUFValueType.FLOAT32: "<f",
    GGUFValueType.BOOL: "<?",
    GGUFValueType.UINT64: "<Q",
    GGUFValueType.INT64: "<q",
    GGUFValueType.FLOAT64: "<d",
}
_INT_TYPES = frozenset(
    t for t in _SCALARS if t not in (GGUFValueType.FLOAT32, GGUFValueType.FLOAT64, GGUFValueType.BOOL)
)


class LazyArray(Sequence[Any]):
    """An array value the header walk stepped over (a vocabulary, its merges, its token types): its length
    and byte span are read and validated like any other array (every string length capped, the span
    inside the header cap and the file), but its elements are decoded only when someone asks for them,
    from the same bytes read again through the same fetch. Checks that only need the length (how many
    tokens) never pay for decoding hundreds of thousands of strings."""

    def __init__(
        self, fetch: Callable[[int, int], bytes], start: int, end: int, n: int, sub: GGUFValueType, key: str
    ) -> None:
        self._fetch, self.start, self.end, self._n, self.sub, self._key = fetch, start, end, n, sub, key
        self._values: list[Any] | None = None

    def __len__(self) -> int:
        return self._n

    def packed(self) -> bytes:
        """The array as the file stores it after its element type: u64 count, then the elements."""
        raw = bytearray()
        begin = self.start - 8
        while len(raw) < self.end - begin:
            got = self._fetch(begin + len(raw), self.end - begin - len(raw))
            if not got:
                raise HeaderError(
                    f"array {self._key}: the file changed since its header was read", offset=self.start
                )
            raw += got
        if struct.unpack_from("<Q", raw)[0] != self._n:
            raise HeaderError(f"array {self._key}: the file changed since its header was read", offset=begin)
        return bytes(raw)

    def values(self) -> list[Any]:
        if self._values is None:
            self._values = _decode_array(memoryview(self.packed())[8:], self._n, self.sub)
        return self._values

    def __getitem__(self, i: Any) -> Any:
        return self.values()[i]

    def __iter__(self) -> Iterator[Any]:
        return iter(self.values())

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (list, LazyArray)):
            return self.values() == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"LazyArray({self._key}: {self._n} x {self.sub.name}, bytes {self.start}..{self.end})"


def _decode_array(raw: memoryview, n: int, sub: GGUFValueType) -> list[Any]:
    if sub in _SCALARS:
        return list(struct.unpack(f"<{n}{_SCALARS[sub][1]}", raw))
    out, pos, unpack = [], 0, struct.Struct("<Q").unpack_from
    for _ in range(n):
        (ln,) = unpack(raw, pos)
        out.append(bytes(raw[pos + 8 : pos + 8 + ln]).decode("utf-8", errors="surrogateescape"))
        pos += 8 + ln
    return out


@dataclass(frozen=True)
class KV:
    type: GGUFValueType
    value: Any  # int / float / bool / str; for ARRAY a list, or a LazyArray
    sub_type: GGUFValueType | None = None  # element type of an ARRAY


@dataclass(frozen=True)
class GGUFTensor:
    name: str
    ne: tuple[int, ...]  # ggml order: ne[0] is the contiguous dimension
    ggml_type: int
    offset: int  # relative to the data section
    begin: int  # absolute byte range in the file
    end: int

    @property
    def shape(self) -> tuple[int, ...]:
        """The HF / numpy shape: ne reversed."""
        return tuple(reversed(self.ne))

    @property
    def type_name(self) -> str:
        return GGMLQuantizationType(self.ggml_type).name

    @property
    def nbytes(self) -> int:
        return self.end - self.begin

    @property
    def numel(self) -> int:
        return math.prod(self.ne)


@dataclass(frozen=True)
class GGUFHeader:
    file: str
    version: int
    kv: Mapping[str, KV]
    tensors: tuple[GGUFTensor, ...]  # in header order
    alignment: int
    data_start: int
    file_size: int
    header_bytes: int  # bytes of the header proper (before the data padding)

    def get(self, key: str, default: Any = None) -> Any:
        kv = self.kv.get(key)
        return default if kv is None else kv.value


def tensor_nbytes(ggml_type: int, ne: tuple[int, ...]) -> int:
    """Bytes of a tensor of this type and shape; ValueError when ne[0] is not a whole number of blocks."""
    block, size = GGML_QUANT_SIZES[GGMLQuantizationType(ggml_type)]
    if ne and ne[0] % block:
        raise ValueError(f"ne[0] = {ne[0]} is not a multiple of the {block}-element block")
    n = 1
    for d in ne:
        n *= d
    return n // block * size


class _Reader:
    """A cursor over the header bytes, fetched through `fetch(start, length)` in growing chunks."""

    def __init__(
        self, fetch: Callable[[int, int], bytes], file_size: int, file: str, lazy: bool = True
    ) -> None:
        self.fetch, self.size, self.file, self.lazy = fetch, file_size, file, lazy
        self.buf = bytearray()
        self.pos = 0
        self.chunk = FIRST_CHUNK
        self.array_total = 0

    def err(self, msg: str, *, offset: int | None = None, hint: str | None = None) -> HeaderError:
        return HeaderError(msg, path=self.file, offset=self.pos if offset is None else offset, hint=hint)

    def need(self, n: int) -> None:
        end = self.pos + n
        if end > self.size:
            raise self.err(
                f"the header runs past the end of the {self.size}-byte file (needs byte {end})",
                hint="the file is truncated or not GGUF; download it again",
            )
        if end > MAX_HEADER_BYTES:
            raise self.err(f"the header would exceed {MAX_HEADER_BYTES} bytes", hint="not a sane GGUF header")
        while len(self.buf) < end:
            want = max(end - len(self.buf), self.chunk)
            want = min(want, self.size - len(self.buf), MAX_HEADER_BYTES - len(self.buf))
            got = self.fetch(len(self.buf), want)
            if not got:
                raise self.err(
                    f"reading byte {len(self.buf)} returned nothing; the file changed or is truncated"
                )
            self.buf += got
            self.chunk = min(self.chunk * 2, MAX_CHUNK)

    def take(self, n: int) -> bytes:
        self.need(n)
        out = bytes(self.buf[self.pos : self.pos + n])
        self.pos += n
        return out

    def scalar(self, t: GGUFValueType) -> Any:
        fmt = _SCALARS[t]
        return struct.unpack(fmt, self.take(struct.calcsize(fmt)))[0]

    def u32(self) -> int:
        return int(self.scalar(GGUFValueType.UINT32))

    def u64(self) -> int:
        return int(self.scalar(GGUFValueType.UINT64))

    def string(self, what: str, *, strict: bool = True) -> str:
        at = self.pos
        n = self.u64()
        if n > MAX_STRING:
            raise self.err(f"{what}: string length {n} exceeds the {MAX_STRING}-byte cap", offset=at)
        raw = self.take(n)
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError as e:
            if strict:
                raise self.err(
                    f"{what}: not UTF-8 (byte {at + 8 + e.start})", offset=at + 8 + e.start
                ) from None
            return raw.decode("utf-8", errors="surrogateescape")

    def vtype(self, what: str) -> GGUFValueType:
        at = self.pos
        raw = self.u32()
        try:
            return GGUFValueType(raw)
        except ValueError:
            raise self.err(f"{what}: unknown value type {raw}", offset=at) from None

    def value(self, t: GGUFValueType, key: str) -> KV:
        if t in _SCALARS:
            return KV(t, self.scalar(t))
        if t == GGUFValueType.STRING:
            return KV(t, self.string(f"value of {key}", strict=False))
        sub = self.vtype(f"array {key}")
        at = self.pos
        n = self.u64()
        if n > MAX_ARRAY or self.array_total + n > MAX_ARRAY_TOTAL:
            raise self.err(
                f"array {key}: {n} elements exceed the cap ({MAX_ARRAY} per array, {MAX_ARRAY_TOTAL} in all)",
                offset=at,
            )
        self.array_total += n
        if sub == GGUFValueType.ARRAY:
            raise self.err(f"array {key}: nested arrays are not used by any GGUF writer", offset=at)
        lazy = self.lazy and n > LAZY_MIN
        if sub in _SCALARS:
            fmt = _SCALARS[sub]
            width = struct.calcsize(fmt)
            if lazy:
                self.need(width * n)  # bounded: need() checks the file size and the cap first
                self.pos += width * n
                return KV(t, LazyArray(self.fetch, self.pos - width * n, self.pos, n, sub, key), sub)
            raw = self.take(width * n)
            return KV(t, list(struct.unpack(f"<{n}{fmt[1]}", raw)), sub)
        if lazy:
            start = self.pos
            self._skip_strings(key, n)
            return KV(t, LazyArray(self.fetch, start, self.pos, n, sub, key), sub)
        return KV(t, self._strings(key, n), sub)

    def _skip_strings(self, key: str, n: int) -> None:
        """Step over n length-prefixed strings, every length capped, decoding nothing: the loop is as
        short as it can be (one unpack, one comparison, one addition a string), and reading past the
        fetched bytes raises struct.error, where the bytes are fetched (need(), with its file-size and
        header caps) and the walk resumes at the same string."""
        unpack, cap, buf = struct.Struct("<Q").unpack_from, MAX_STRING, self.buf
        i, pos = 0, self.pos
        while i < n:
            try:
                for i in range(i, n):  # noqa: B020 (the walk resumes at i after a fetch)
                    ln = unpack(buf, pos)[0]
                    if ln > cap:
                        self.pos = pos
                        raise self.err(
                            f"array {key}[{i}]: string length {ln} exceeds the {MAX_STRING}-byte cap"
                        )
                    pos += 8 + ln
                else:
                    i = n
            except struct.error:
                self.pos = pos
                self.need(8)
            self.pos = pos
        self.pos = pos
        if pos > len(buf):  # the last string's bytes are not fetched yet
            start, self.pos = self.pos, len(buf)
            self.need(start - len(buf))
            self.pos = start

    def _strings(self, key: str, n: int) -> list[str]:
        """n length-prefixed strings: the vocabulary and merges, hundreds of thousands of them, so the loop
        works on the buffer in place and calls need() only when it runs out of fetched bytes."""
        out: list[str] = []
        unpack = struct.Struct("<Q").unpack_from
        buf, pos, have = self.buf, self.pos, len(self.buf)
        for i in range(n):
            if pos + 8 > have:
                self.pos = pos
                self.need(8)
                have = len(buf)
            (ln,) = unpack(buf, pos)
            if ln > MAX_STRING:
                self.pos = pos
                raise self.err(f"array {key}[{i}]: string length {ln} exceeds the {MAX_STRING}-byte cap")
            end = pos + 8 + ln
            if end > have:
                self.pos = pos
                self.need(8 + ln)
                have = len(buf)
            out.append(buf[pos + 8 : end].decode("utf-8", errors="surrogateescape"))
            pos = end
        self.pos = pos
        return out


def parse_gguf_header(
    fetch: Callable[[int, int], bytes], file_size: int, file: str = "", *, lazy: bool = True
) -> GGUFHeader:
    """Read and validate a GGUF header through `fetch(start, length)`; raises HeaderError. Arrays of more
    than LAZY_MIN elements come back as LazyArray unless lazy=False."""
    r = _Reader(fetch, file_size, file, lazy)
    magic = r.u32()
    if magic != GGUF_MAGIC:
        raise r.err(f"not a GGUF file (magic {magic:#010x})", offset=0)
    version = r.u32()
    if version not in (2, 3):
        swapped = struct.unpack("<I", struct.pack(">I", version))[0]
        why = (
            "a big-endian GGUF, which llama.cpp on x86 / ARM does not load"
            if swapped in (2, 3)
            else f"unsupported GGUF version {version}"
        )
        raise r.err(why, offset=4, hint="re-export the file as little-endian GGUF v3")
    n_tensors, n_kv = r.u64(), r.u64()
    if n_tensors > MAX_TENSORS or n_kv > MAX_KV:
        raise r.err(f"{n_tensors} tensors / {n_kv} keys exceed the caps ({MAX_TENSORS} / {MAX_KV})", offset=8)
    kv: dict[str, KV] = {}
    for _ in range(n_kv):
        at = r.pos
        key = r.string("key")
        t = r.vtype(f"key {key}")
        value = r.value(t, key)
        if key in kv:
            raise r.err(f"key {key} appears twice; readers disagree on which value wins", offset=at)
        kv[key] = value
    infos = [_tensor_info(r) for _ in range(n_tensors)]
    header_bytes = r.pos
    alignment = _alignment(r, kv)
    data_start = -(-header_bytes // alignment) * alignment
    return GGUFHeader(
        file,
        version,
        kv,
        _place(r, infos, data_start, alignment),
        alignment,
        data_start,
        file_size,
        header_bytes,
    )


def _tensor_info(r: _Reader) -> tuple[str, tuple[int, ...], int, int, int]:
    at = r.pos
    name = r.string("tensor name")
    n_dims = r.u32()
    if n_dims > MAX_DIMS:
        raise r.err(f"tensor {name}: {n_dims} dimensions (ggml has at most {MAX_DIMS})", offset=at)
    ne = tuple(r.u64() for _ in range(n_dims))
    t_at = r.pos
    ggml_type = r.u32()
    offset = r.u64()
    try:
        GGMLQuantizationType(ggml_type)
    except ValueError:
        raise r.err(f"tensor {name}: unknown ggml type {ggml_type}", offset=t_at) from None
    return name, ne, ggml_type, offset, at


def _alignment(r: _Reader, kv: Mapping[str, KV]) -> int:
    a = kv.get("general.alignment")
    if a is None:
        return GGUF_DEFAULT_ALIGNMENT
    if (
        a.type not in _INT_TYPES
        or not isinstance(a.value, int)
        or a.value <= 0
        or a.value & (a.value - 1)
        or a.value > 1 << 20
    ):
        raise r.err(f"general.alignment = {a.value!r} is not a positive power of two", offset=0)
    return int(a.value)


def _place(
    r: _Reader, infos: list[tuple[str, tuple[int, ...], int, int, int]], data_start: int, alignment: int
) -> tuple[GGUFTensor, ...]:
    out, seen = [], set()
    for name, ne, ggml_type, offset, at in infos:
        if name in seen:
            raise r.err(f"tensor {name} appears twice", offset=at)
        seen.add(name)
        if any(d > 1 << 40 for d in ne):
            raise r.err(f"tensor {name}: dimension {max(ne)} is absurd", offset=at)
        try:
            nbytes = tensor_nbytes(ggml_type, ne)
        except ValueError as e:
            raise r.err(f"tensor {name} ({GGMLQuantizationType(ggml_type).name}): {e}", offset=at) from None
        if offset % alignment:
            raise r.err(f"tensor {name}: data offset {offset} is not aligned to {alignment}", offset=at)
        begin = data_start + offset
        if begin + nbytes > r.size:
            raise r.err(
                f"tensor {name}: its {nbytes} bytes at {begin} run past the end of the {r.size}-byte file",
                offset=at,
                hint="the file is truncated; download it again",
            )
        out.append(GGUFTensor(name, ne, ggml_type, offset, begin, begin + nbytes))
    ordered = sorted(out, key=lambda t: (t.begin, t.end))
    for a, b in zip(ordered, ordered[1:]):
        if b.begin < a.end:
            raise HeaderError(
                f"tensors {a.name} and {b.name} overlap (bytes {b.begin}..{a.end})",
                path=r.file,
                offset=b.begin,
                hint="the file was written wrongly; re-export it",
            )
    return tuple(out)


def read_gguf_header(source: Any, name: str, *, lazy: bool = True) -> tuple[GGUFHeader, int]:
    """The header of `name` in a Source, and how many bytes were read to get it."""
    size = source.file_size(name)
    read = [0]

    def fetch(start: int, length: int) -> bytes:
        data: bytes = source.read_range(name, start, length)
        read[0] += len(data)
        return data

    return parse_gguf_header(fetch, size, name, lazy=lazy), read[0]
