"""Bit-identical dense tensors, found from their stored bytes: no float work and no torch.

A re-export or a quantized checkpoint keeps most dense tensors byte for byte (norms, conv, selector,
ignored modules; every tensor of a plain copy). Their figures are known without widening a value: equal,
cosine 1, errors 0 (Figures.identical), as long as no value is NaN / Inf, which the float path counts as
different. So such a pair is read CHUNK bytes at a time into two reused buffers, the buffers compared
(memcmp) and the exponent bits of one side checked with two numpy maxima; a tensor that differs anywhere
goes to the float path (torch) from its first row, so its figures are the float path's own.

CHUNK is what `cat` reads at a time (128 KiB): both buffers stay in the core's L2, so a byte costs one
copy out of the page cache and two passes from the cache. Measured on 1.15 GB (bench/RESULTS.md).
"""

from __future__ import annotations

from typing import Protocol

from ..sources.safetensors_header import TensorInfo

CHUNK = 128 << 10
REMOTE_CHUNK = 8 << 20  # through the source (the Hub): one ranged request per 8 MiB, as the float path reads

# dtype -> (signed view, unsigned view, smallest +Inf/NaN bit pattern as signed, smallest -Inf/NaN as unsigned):
# a value is Inf or NaN when its exponent bits are all ones; positive ones are the signed maxima at or above
# the first bound, negative ones the unsigned maxima at or above the second.
_FLOATS = {
    "BF16": ("<i2", "<u2", 0x7F80, 0xFF80),
    "F16": ("<i2", "<u2", 0x7C00, 0xFC00),
    "F32": ("<i4", "<u4", 0x7F800000, 0xFF800000),
}
# stored integers are always finite after widening to float32; F64 (which can overflow float32) and FP8
# (NaN codes) take the float path
_INTS = frozenset({"I8", "I16", "I32", "I64", "U8", "U16", "U32", "U64", "BOOL"})


class RawSide(Protocol):
    def dense_info(self, name: str) -> TensorInfo | None: ...
    def is_local(self, file: str) -> bool: ...
    def read_into(self, file: str, start: int, buf: bytearray) -> bytes | bytearray: ...


def finite(data: bytes | bytearray, dtype: str) -> bool:
    """No Inf / NaN among the values of `data` (whole elements of `dtype`)."""
    spec = _FLOATS.get(dtype)
    if spec is None or not data:
        return dtype in _INTS or not data
    import numpy as np  # heavy: numpy loads only when this runs

    signed, unsigned, pos, neg = spec
    return int(np.frombuffer(data, signed).max()) < pos and int(np.frombuffer(data, unsigned).max()) < neg


def identical(d: RawSide, r: RawSide, d_name: str, r_name: str, bufs: tuple[bytearray, bytearray]) -> bool:
    """The dense tensors have the same dtype, byte count and bytes, and every value is finite."""
    a, b = d.dense_info(d_name), r.dense_info(r_name)
    if a is None or b is None or a.dtype != b.dtype or a.nbytes != b.nbytes:
        return False
    if a.dtype not in _FLOATS and a.dtype not in _INTS:
        return False
    step = CHUNK if d.is_local(a.file) and r.is_local(b.file) else REMOTE_CHUNK
    for off in range(0, a.nbytes, step):
        n = min(step, a.nbytes - off)
        bx, by = bufs if n == len(bufs[0]) else (bytearray(n), bytearray(n))
        x = d.read_into(a.file, a.begin + off, bx)
        y = r.read_into(b.file, b.begin + off, by)
        if x != y or not finite(x, a.dtype):  # bytes / bytearray equality is one memcmp
            return False
    return True


def buffers() -> tuple[bytearray, bytearray]:
    return bytearray(CHUNK), bytearray(CHUNK)
