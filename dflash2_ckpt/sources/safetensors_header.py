"""Bounded safetensors header parsing: pure functions on bytes, shared by local files and HTTP Range reads.

File layout: 8-byte little-endian header length n, n bytes of UTF-8 JSON (name -> {dtype, shape,
data_offsets}, optional "__metadata__" string map), then the data. The rules enforced follow the
safetensors reference validator: size cap, UTF-8, a JSON object, known dtypes, offsets contiguous
from 0, span = elements x dtype size, the data fully covered, nothing after it.
"""

from __future__ import annotations

import json
import math
import struct
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..errors import HeaderError

# safetensors refuses headers over 100 MB; a drafter's header is a few KiB, so this is generous.
MAX_HEADER_BYTES = 100_000_000
# tensors in one file: a drafter has a few hundred; parsing a million costs gigabytes and a minute, so
# the count is taken from the text (one linear scan) before the JSON is parsed (as the GGUF reader does)
MAX_TENSORS = 1 << 16
# bits per element
DTYPE_BITS: dict[str, int] = {
    "BOOL": 8,
    "U8": 8,
    "I8": 8,
    "F8_E5M2": 8,
    "F8_E4M3": 8,
    "F8_E8M0": 8,
    "I16": 16,
    "U16": 16,
    "F16": 16,
    "BF16": 16,
    "I32": 32,
    "U32": 32,
    "F32": 32,
    "I64": 64,
    "U64": 64,
    "F64": 64,
    "F4": 4,
    "F6_E2M3": 6,
    "F6_E3M2": 6,
    "C64": 64,
}
FLOAT_DTYPES = frozenset({"F16", "BF16", "F32", "F64"})


@dataclass(frozen=True)
class TensorInfo:
    name: str
    dtype: str
    shape: tuple[int, ...]
    begin: int  # offset of the tensor's first byte in the file
    end: int  # one past its last byte
    file: str = ""  # file name relative to the checkpoint

    @property
    def nbytes(self) -> int:
        return self.end - self.begin

    @property
    def numel(self) -> int:
        return math.prod(self.shape)


@dataclass(frozen=True)
class Header:
    file: str
    header_len: int
    file_size: int
    tensors: tuple[TensorInfo, ...]  # in data order
    metadata: Mapping[str, str] | None

    @property
    def data_start(self) -> int:
        return 8 + self.header_len

    @property
    def data_bytes(self) -> int:
        return self.file_size - self.data_start


# what a file checked out without its Git LFS object holds instead (git-lfs docs/spec.md: a pointer file
# is "version https://git-lfs.github.com/spec/v1", an oid and a size, well under 1024 bytes)
LFS_POINTER = b"version https://git-lfs.github.com/spec/v1"
MAX_LFS_POINTER = 1024


def parse_length(prefix: bytes, file_size: int, *, file: str = "") -> int:
    """Header length from the first 8 bytes, refused when it cannot fit the file or the cap."""
    if file_size < 8 or len(prefix) < 8:
        raise HeaderError(
            f"file is {file_size} bytes, shorter than the 8-byte header length",
            path=file,
            offset=0,
            hint="the file is truncated; download it again",
        )
    if prefix[:8] == LFS_POINTER[:8] and file_size <= MAX_LFS_POINTER:
        raise HeaderError(
            f"a Git LFS pointer file ({file_size} bytes), not the weights: the repository was cloned "
            "without fetching its LFS objects. Run `git lfs pull`",
            path=file,
            offset=0,
            hint="`git lfs install` once, then `git lfs pull` in the repository",
        )
    n: int = struct.unpack("<Q", prefix[:8])[0]
    if n > MAX_HEADER_BYTES:
        raise HeaderError(
            f"header length {n} exceeds the {MAX_HEADER_BYTES}-byte cap",
            path=file,
            offset=0,
            hint="not a safetensors file, or a corrupted one",
        )
    if 8 + n > file_size:
        raise HeaderError(
            f"header length {n} runs past the end of the {file_size}-byte file",
            path=file,
            offset=0,
            hint="the file is truncated; download it again",
        )
    if n < 2:
        raise HeaderError(f"header length {n} is too short for a JSON object", path=file, offset=0)
    return n


def _reject_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in pairs:
        if k in out:
            raise ValueError(f"duplicate key {k!r}")
        out[k] = v
    return out


def _reject_constant(name: str) -> Any:
    raise ValueError(f"non-standard JSON constant {name}")


def _is_int(x: Any) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def parse_header(raw: bytes, *, header_len: int, file_size: int, file: str = "") -> Header:
    """Parse and validate the JSON header (raw = exactly header_len bytes after the length prefix)."""
    if len(raw) != header_len:
        raise HeaderError(f"header is {len(raw)} bytes, expected {header_len}", path=file, offset=8)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise HeaderError(
            f"header is not UTF-8 (byte {8 + e.start})", path=file, offset=8 + e.start
        ) from None
    count = text.count('"data_offsets"')
    if count > MAX_TENSORS:
        raise HeaderError(
            f"header describes about {count:,} tensors; a drafter has a few hundred (at most "
            f"{MAX_TENSORS:,} are read)",
            path=file,
            offset=8,
        )
    try:
        obj = json.loads(text, object_pairs_hook=_reject_duplicates, parse_constant=_reject_constant)
    except (ValueError, RecursionError) as e:
        raise HeaderError(f"header is not valid JSON: {e}", path=file, offset=8) from None
    if not isinstance(obj, dict):
        raise HeaderError(f"header is a JSON {type(obj).__name__}, not an object", path=file, offset=8)

    metadata = obj.pop("__metadata__", None)
    if metadata is not None and not (
        isinstance(metadata, dict) and all(isinstance(v, str) for v in metadata.values())
    ):
        raise HeaderError("__metadata__ is not a map of strings to strings", path=file, offset=8)

    data_start = 8 + header_len
    data_len = file_size - data_start
    entries = []
    for name, info in obj.items():
        if not isinstance(info, dict):
            raise HeaderError("entry is not an object", path=file, tensor=name)
        dtype, shape, offsets = info.get("dtype"), info.get("shape"), info.get("data_offsets")
        if not isinstance(dtype, str) or dtype not in DTYPE_BITS:  # a list / object is unhashable
            raise HeaderError(f"unknown dtype {dtype!r}", path=file, tensor=name)
        if not isinstance(shape, list) or not all(_is_int(d) and d >= 0 for d in shape):
            raise HeaderError(
                f"shape {shape!r} is not a list of non-negative integers", path=file, tensor=name
            )
        if (
            not isinstance(offsets, list)
            or len(offsets) != 2
            or not all(_is_int(o) and o >= 0 for o in offsets)
            or offsets[0] > offsets[1]
        ):
            raise HeaderError(
                f"data_offsets {offsets!r} is not [begin, end] with 0 <= begin <= end", path=file, tensor=name
            )
        # a zero dimension makes the tensor empty whatever the others say ([3, 3, 0] is valid), so
        # check it before the early exit below, which would otherwise refuse it as oversized
        numel = 0 if 0 in shape else 1
        for d in shape if numel else ():
            numel *= d
            if numel > 8 * (data_len + 1):  # stops runaway products before they get expensive
                break
        bits = numel * DTYPE_BITS[dtype]
        span = offsets[1] - offsets[0]
        if bits % 8 or bits // 8 != span:
            raise HeaderError(
                f"{dtype} {shape} needs {bits / 8:g} bytes but data_offsets span {span}",
                path=file,
                tensor=name,
            )
        entries.append((offsets[0], offsets[1], name, dtype, tuple(shape)))

    entries.sort()
    cursor = 0
    tensors = []
    for begin, end, name, dtype, shape in entries:
        if begin != cursor:
            what = (
                "overlaps the previous tensor"
                if begin < cursor
                else f"leaves a gap of {begin - cursor} bytes"
            )
            raise HeaderError(
                f"data_offsets [{begin}, {end}] {what}", path=file, tensor=name, offset=data_start + begin
            )
        cursor = end
        tensors.append(TensorInfo(name, dtype, shape, data_start + begin, data_start + end, file))
    if cursor != data_len:
        if cursor > data_len:
            raise HeaderError(
                f"tensors need {cursor} data bytes but the file holds {data_len}",
                path=file,
                hint="the file is truncated; download it again",
            )
        raise HeaderError(
            f"{data_len - cursor} bytes after the last tensor are not described by the header",
            path=file,
            offset=data_start + cursor,
        )
    return Header(file, header_len, file_size, tuple(tensors), metadata)


def build_header(
    tensors: list[tuple[str, str, tuple[int, ...]]], metadata: Mapping[str, str] | None = None
) -> tuple[bytes, list[tuple[int, int]]]:
    """Serialise a header for tensors laid out contiguously in the given order.

    Returns the 8-byte prefix plus padded JSON, and each tensor's [begin, end) data offsets.
    """
    obj: dict[str, Any] = {}
    if metadata:
        obj["__metadata__"] = dict(metadata)
    spans = []
    cursor = 0
    for name, dtype, shape in tensors:
        numel = 1
        for d in shape:
            numel *= d
        nbytes = numel * DTYPE_BITS[dtype] // 8
        obj[name] = {"dtype": dtype, "shape": list(shape), "data_offsets": [cursor, cursor + nbytes]}
        spans.append((cursor, cursor + nbytes))
        cursor += nbytes
    body = json.dumps(obj, separators=(",", ":")).encode()
    body += b" " * (-len(body) % 8)  # keep the data 8-byte aligned, as safetensors does
    return struct.pack("<Q", len(body)) + body, spans
