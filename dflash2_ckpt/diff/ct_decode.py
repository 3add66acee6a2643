"""compressed-tensors' dequantization of pack-quantized (int4 / int8), float-quantized (FP8, int8) and
nvfp4-pack-quantized weights, reproduced bit for bit in fewer passes.

Why not call the library: importing compressed_tensors.compressors imports transformers (1.5-5 CPU-s and
about 170 MiB before a byte is read, bench/RESULTS.md) and its decompress costs about 3 ns a value (W4A16,
2-core EPYC) in temporaries: nibble stack, int8, bf16 arithmetic, then the float32 copy diff needs. The
library stays the decoder of record: tests/diff/test_ct_decode.py decodes the fixtures and random tensors
both ways and requires the same float32 bits, and anything `supported` refuses still goes to the library.

What the library computes (compressed_tensors 0.20, quantization/lifecycle/forward_helpers.py _dequantize):
x_q.to(scale.dtype) [- zero_point.to(scale.dtype)] * scale in the scale's dtype, then .to(the output dtype);
NVFP4 first divides its FP8 group scale (as bf16) by the global scale and rounds the result to bf16. A
quantized value has at most 9 significant bits and a bf16 / f16 scale 8 / 11, so their product is exact in
float32: one float32 multiply rounded once to the scale's dtype (torch's round-to-nearest-even) is the
library's bf16 / f16 product, and with a float32 scale it is the same float32 multiply.
"""

from __future__ import annotations

import sys

import torch

from ..quant.config import Scheme

_ROUNDABLE = (torch.float32, torch.bfloat16, torch.float16)
_QDTYPES = (torch.float8_e4m3fn, torch.float8_e5m2, torch.int8)
_E2M1 = (0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0, -0.0, -0.5, -1.0, -1.5, -2.0, -3.0, -4.0, -6.0)
# one byte of NVFP4 -> its two values, low nibble first (compressed_tensors unpack_fp4_from_uint8)
_FP4_PAIRS = torch.tensor([[_E2M1[b & 0xF], _E2M1[b >> 4]] for b in range(256)], dtype=torch.float32)
# every FP8 code widened by torch itself: a table lookup gives the same bits at about a quarter of the cost of
# .to(float32), which has no vectorised FP8 path (0.8-1 against 3-4 ns a value, measured on 512 Ki values)
_FP8 = {
    dt: torch.arange(256, dtype=torch.int32).to(torch.uint8).view(dt).to(torch.float32)
    for dt in (torch.float8_e4m3fn, torch.float8_e5m2)
}


def widen(q: torch.Tensor) -> torch.Tensor:
    """A stored tensor as float32, exactly as .to(float32) gives it (FP8 through the table above)."""
    table = _FP8.get(q.dtype)
    if table is None:
        return q.to(torch.float32)
    idx = q.contiguous().view(torch.uint8).reshape(-1).to(torch.int32)
    return torch.index_select(table, 0, idx).reshape(q.shape)


def supported(
    fam: str,
    scheme: Scheme,
    scale: torch.Tensor,
    cols: int,
    q: torch.Tensor | None = None,
    global_scale: torch.Tensor | None = None,
) -> bool:
    """Layouts decoded here; the rest (other bit widths, block or token strategies, scales in other dtypes,
    a group that does not divide the columns, which the library refuses) go to compressed-tensors."""
    if sys.byteorder != "little":
        return False
    if scale.dtype not in _ROUNDABLE and not (fam == "ct-nvfp4" and scale.dtype == torch.float8_e4m3fn):
        return False
    grouped = scheme.strategy in ("group", "tensor_group")
    if grouped and (
        not scheme.group_size
        or cols % scheme.group_size
        or scale.dim() != 2
        or scale.shape[-1] != cols // scheme.group_size
    ):
        return False
    if not grouped and scheme.strategy not in ("channel", "tensor"):
        return False
    if fam == "ct-pack":
        return scheme.bits in (4, 8) and (scheme.symmetric or scheme.strategy in ("group", "channel"))
    if fam == "ct-float":
        return q is not None and q.dtype in _QDTYPES
    return fam == "ct-nvfp4" and grouped and global_scale is not None and global_scale.dtype in _ROUNDABLE


def _times_scale(w: torch.Tensor, scale: torch.Tensor, strategy: str) -> torch.Tensor:
    """w [rows, cols] float32, multiplied in place by its scale (per group, row or tensor) in float32."""
    rows, cols = w.shape
    s = scale.float()
    if strategy in ("group", "tensor_group"):
        groups = s.shape[-1]
        w.view(rows, groups, cols // groups).mul_(s.reshape(rows, groups, 1))
    elif s.numel() == 1:
        w.mul_(s.reshape(1, 1))
    else:
        w.mul_(s.reshape(rows, 1))
    return w


def _rounded(w: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    """w rounded to `dtype` (nearest even) and widened back in place."""
    if dtype != torch.float32:
        w.copy_(w.to(dtype))
    return w


def pack(
    packed: torch.Tensor,
    bits: int,
    cols: int,
    scale: torch.Tensor,
    scheme: Scheme,
    zero_point: torch.Tensor | None = None,
) -> torch.Tensor:
    """pack-quantized int32 words [rows, words] -> float32 [rows, cols]. Value i of a row sits at bit i * bits
    of its words (little-endian), stored plus 2^(bits-1); a zero point is packed the same way along rows."""
    rows = packed.shape[0]
    b = packed.contiguous().view(torch.uint8).reshape(rows, -1)
    if bits == 4:
        q = torch.empty((rows, b.shape[1], 2), dtype=torch.uint8)
        torch.bitwise_and(b, 0xF, out=q[..., 0])
        torch.bitwise_right_shift(b, 4, out=q[..., 1])
        b = q.view(rows, -1)
    w = b[:, :cols].to(torch.float32).sub_(1 << (bits - 1))
    if zero_point is not None:
        per, mask = 32 // bits, (1 << bits) - 1
        shifts = torch.arange(per, dtype=torch.int32).reshape(1, per, 1) * bits
        z = ((zero_point.to(torch.int32).unsqueeze(1) >> shifts) & mask).reshape(-1, zero_point.shape[-1])[
            :rows
        ]
        zf = z.to(torch.float32).sub_(1 << (bits - 1))
        groups = zf.shape[-1]
        w.view(rows, groups, cols // groups).sub_(zf.reshape(rows, groups, 1))
    return _rounded(_times_scale(w, scale, scheme.strategy), scale.dtype)


def float_quantized(q: torch.Tensor, scale: torch.Tensor, scheme: Scheme) -> torch.Tensor:
    """float-quantized FP8 / int8 [rows, cols] -> float32 (FP8 and int8 widen exactly)."""
    w = widen(q)
    return _rounded(_times_scale(w, scale, scheme.strategy), scale.dtype)


def nvfp4(packed: torch.Tensor, cols: int, scale: torch.Tensor, global_scale: torch.Tensor) -> torch.Tensor:
    """nvfp4-pack-quantized uint8 [rows, cols / 2] with FP8 group scales -> float32 [rows, cols]."""
    rows = packed.shape[0]
    s = scale.to(torch.bfloat16) / global_scale  # the library's own op on the small tensor, in its dtype
    idx = packed.reshape(-1).to(torch.int32)
    w = torch.index_select(_FP4_PAIRS, 0, idx).reshape(rows, -1)[:, :cols]
    if not w.is_contiguous():
        w = w.contiguous()
    _times_scale(w, s, "group")
    return _rounded(_rounded(w, s.dtype), torch.bfloat16)
