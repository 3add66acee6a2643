"""The float path in numpy, for a diff whose derived side is compressed-tensors pack-quantized (W4A16 / W8A16):
such a pair is compared without importing torch (1.1-2.2 CPU-s and about 250 MiB before the first byte,
bench/RESULTS.md), the one cost that kept a quantized diff far above `cat` of its files.

What runs here: dense F32 / F16 / BF16 rows widened to float32 (BF16 by moving its bits up 16), and
pack-quantized int4 / int8 decoded to the float32 values ct_decode.pack gives, bit for bit (the same steps:
nibbles low first, minus 2^(bits-1), minus the zero point, times the float32 scale per group / row / tensor,
rounded once to the scale's dtype, nearest even). The figures are the torch path's sums (compare.Figures.add_np):
float32 dot products per 64 Ki-value slice (numpy's BLAS, not torch's), float64 totals. Those dots differ
from torch's in the last bits, so the receipt of such a pair agrees with the torch path's to TOLERANCE, not
bit for bit (tests/diff/test_numpy_figures.py; measured worst in docs/diff.md). Everything else (FP8, NVFP4,
ModelOpt, MLX, GGUF, F64 / FP8 dense tensors, other pack layouts) stays on the torch path.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from ..quant.config import Scheme

if TYPE_CHECKING:
    from numpy.typing import NDArray

# relative tolerance of a receipt figure against the torch path's (cosine, relative RMS errors). Both paths
# sum float32 dot products of 64 Ki-value slices, each slice carrying its own float32 rounding (up to about
# 3e-5 relative at 10^6 values, tests/diff/test_golden_receipts.py), so they agree to that order, not to
# the last bit: measured worst 4.4e-6 (docs/diff.md). The max abs error is the same float32 subtraction of
# the same values: equal.
TOLERANCE = 1e-4

# stored dtype -> numpy dtype read (BF16: its bit pattern, widened by widen())
NP_DTYPES: dict[str, str] = {
    "F32": "<f4",
    "F16": "<f2",
    "BF16": "<u2",
    "I32": "<i4",
    "I64": "<i8",
    "U8": "u1",
    "I8": "i1",
    "U32": "<u4",
    "I16": "<i2",
    "U16": "<u2",
    "U64": "<u8",
}
DENSE = frozenset({"F32", "F16", "BF16"})  # dense dtypes widened here
SCALES = DENSE

NpReader = Callable[[str, int, int], "NDArray[np.generic]"]  # (tensor name, row0, row1) -> stored rows


def widen(x: NDArray[np.generic], dtype: str, out: NDArray[np.float32] | None = None) -> NDArray[np.float32]:
    """Stored values as float32, exactly (.to(float32)); into `out` (at least x's size) when given."""
    flat = x.reshape(-1)
    o: NDArray[np.float32] = out[: flat.size] if out is not None else np.empty(flat.size, np.float32)
    if dtype == "BF16":  # widen, then shift in place: a third of one casting shift's cost
        u = o.view(np.uint32)
        np.copyto(u, flat)
        np.left_shift(u, np.uint32(16), out=u)
    else:
        np.copyto(o, flat, casting="unsafe")
    return o if out is not None else o.reshape(x.shape)


def _round_to(w: NDArray[np.float32], dtype: str, maybe_nan: bool) -> None:
    """w rounded in place to `dtype` (nearest even) and back to float32, as torch's .to(dtype).float().
    maybe_nan: w may hold NaN (only a non-finite scale makes one: q x Inf, q x NaN)."""
    if dtype == "F16":
        np.copyto(w, w.astype(np.float16))
    elif dtype == "BF16":  # keep the top 16 bits, rounding on the 17th, ties to the even result
        nan = np.isnan(w) if maybe_nan else None
        u = w.view(np.uint32)
        lsb = (u >> 16) & 1
        u += lsb
        u += 0x7FFF
        u &= 0xFFFF0000
        if nan is not None:  # the carry above would turn a NaN's bits into Inf or 0: keep NaN
            w[nan] = np.nan


def supported(scheme: Scheme, cols: int, scale_dtype: str, scale_shape: tuple[int, ...]) -> bool:
    """The pack-quantized layouts decoded here (those ct_decode.supported accepts with a float scale)."""
    if scheme.family != "ct-pack" or scheme.bits not in (4, 8) or scale_dtype not in SCALES:
        return False
    if not (scheme.symmetric or scheme.strategy in ("group", "channel")):
        return False
    if scheme.strategy == "group":
        gs = scheme.group_size
        return (
            gs is not None
            and gs > 0
            and cols % gs == 0
            and len(scale_shape) == 2
            and scale_shape[-1] == cols // gs
        )
    return scheme.strategy in ("channel", "tensor")


@np.errstate(all="ignore")  # a damaged scale (Inf, NaN, huge) yields Inf / NaN as torch does, no warning
def pack(
    packed: NDArray[np.generic],
    bits: int,
    cols: int,
    scale: NDArray[np.float32],
    scale_dtype: str,
    strategy: str,
    zero_point: NDArray[np.generic] | None = None,
) -> NDArray[np.float32]:
    """pack-quantized int32 words [rows, words] -> float32 [rows, cols] (ct_decode.pack's values)."""
    rows = packed.shape[0]
    b = np.ascontiguousarray(packed).view(np.uint8).reshape(rows, -1)
    if bits == 4:  # byte -> uint16 lo | hi << 8: its bytes are the two nibbles in order (little-endian);
        x = np.empty(b.shape, np.uint16)  # a third of the cost of strided nibble stores or a table lookup
        np.copyto(x, b)
        x |= x << 4
        x &= 0x0F0F
        q = x.view(np.uint8)
        q -= 8  # wraps to the int8 bits of value - 8
    else:
        q = b ^ np.uint8(0x80)  # the int8 bits of value - 128
    w = np.empty((rows, cols), np.float32)
    np.copyto(w, q.view(np.int8)[:, :cols])  # the offset taken in bytes: a quarter of a float32 pass
    if zero_point is not None:
        per, mask = 32 // bits, (1 << bits) - 1
        shifts = (np.arange(per, dtype=np.int32) * bits).reshape(1, per, 1)
        zp = zero_point.astype(np.int32)
        z = ((zp[:, None, :] >> shifts) & mask).reshape(-1, zp.shape[-1])[:rows].astype(np.float32)
        z -= 1 << (bits - 1)
        groups = z.shape[-1]
        w.reshape(rows, groups, cols // groups)[...] -= z.reshape(rows, groups, 1)
    if strategy == "group":
        groups = scale.shape[-1]
        w.reshape(rows, groups, cols // groups)[...] *= scale.reshape(rows, groups, 1)
    elif scale.size == 1:
        w *= scale.reshape(1, 1)
    else:
        w *= scale.reshape(rows, 1)
    _round_to(w, scale_dtype, not bool(np.isfinite(scale).all()))
    return w


def scale_var(scale: NDArray[np.float32], rows: int, cols: int) -> float:
    """Sum over the elements of D^2/12 for a per-group / row / tensor step D (dequant._scale_var; groups that
    divide the columns, which supported() requires)."""
    s = scale.reshape(-1)
    return float(np.sum(s * s, dtype=np.float64)) * (rows * cols / s.size) / 12


def dequantize_rows(
    scheme: Scheme,
    module: str,
    read: NpReader,
    dtypes: Callable[[str], str],
    logical: tuple[int, ...],
    r0: int,
    r1: int,
) -> tuple[NDArray[np.float32], float]:
    """(float32 rows r0:r1 of a pack-quantized weight, predicted squared rounding error over them), as
    dequant.dequantize_rows gives them for this family. dtypes: a stored tensor's safetensors dtype."""
    from .rows import ALL  # lazy: diff.rows loads only on this path

    rows, cols, p = r1 - r0, logical[-1], f"{module}."
    sname = p + "weight_scale"
    scale = widen(read(sname, *((0, ALL) if scheme.strategy == "tensor" else (r0, r1))), dtypes(sname))
    zp = None
    if not scheme.symmetric:
        per = 32 // scheme.bits
        zp = read(p + "weight_zero_point", r0 // per, -(-r1 // per))
    w = pack(read(p + "weight_packed", r0, r1), scheme.bits, cols, scale, dtypes(sname), scheme.strategy, zp)
    return w, scale_var(scale, rows, cols)
