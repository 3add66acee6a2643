"""The grouped dynamic convolution as one fused Triton launch per call (either side).

Program (block b, channel tile) computes δ = W·h for its channels and all taps and applies the
taps, so the projection never round-trips through memory. δ is computed per channel rather than
per group: redundant by a factor of gs, but it keeps every access a plain masked tile load (no
in-register gather), which the smoke values over speed. Import this module only after the Triton
mode is set (see device.py).
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl


@triton.jit
def _conv_kernel(
    h_ptr,
    y_ptr,
    w_ptr,
    base_ptr,
    out_ptr,
    B,
    H,
    G,
    GS,
    SIDE,
    T: tl.constexpr,
    BLOCK_B: tl.constexpr,
    BLOCK_H: tl.constexpr,
    BLOCK_K: tl.constexpr,
):
    blk = tl.program_id(0)
    tile = tl.program_id(1)
    rows = tl.arange(0, BLOCK_B)
    rmask = rows < B
    ch = tile * BLOCK_H + tl.arange(0, BLOCK_H)
    cmask = ch < H
    grp = ch // GS
    row0 = (blk * B).to(tl.int64)
    acc = tl.zeros([BLOCK_B, BLOCK_H], dtype=tl.float32)
    for t in tl.static_range(T):
        wrow = (SIDE * T + t) * G + grp  # kernel_projection row of (side, tap, group)
        delta = tl.zeros([BLOCK_B, BLOCK_H], dtype=tl.float32)
        for k0 in range(0, H, BLOCK_K):
            ks = k0 + tl.arange(0, BLOCK_K)
            kmask = ks < H
            hv = tl.load(
                h_ptr + (row0 + rows)[:, None] * H + ks[None, :],
                mask=rmask[:, None] & kmask[None, :],
                other=0.0,
            )
            wv = tl.load(
                w_ptr + wrow[:, None].to(tl.int64) * H + ks[None, :],
                mask=cmask[:, None] & kmask[None, :],
                other=0.0,
            )
            delta += tl.sum(hv[:, None, :] * wv[None, :, :], axis=2)
        bk = tl.load(base_ptr + (SIDE * T + t) * H + ch, mask=cmask, other=0.0)
        # tap t reads row i − t of the same block; rows i < t have no such tap
        src_ok = rmask & (rows >= t)
        yv = tl.load(
            y_ptr + (row0 + rows - t)[:, None] * H + ch[None, :],
            mask=src_ok[:, None] & cmask[None, :],
            other=0.0,
        )
        acc += (bk[None, :] + delta) * yv
    tl.store(out_ptr + (row0 + rows)[:, None] * H + ch[None, :], acc, mask=rmask[:, None] & cmask[None, :])


def _tiles(hidden: int, interpret: bool) -> tuple[int, int]:
    # the interpreter pays per program and per loop trip, a GPU per register: different sweet spots
    if interpret:
        return min(triton.next_power_of_2(hidden), 128), min(triton.next_power_of_2(hidden), 128)
    return min(triton.next_power_of_2(hidden), 32), min(triton.next_power_of_2(hidden), 16)


def triton_grouped_dynamic_conv(
    y: torch.Tensor, h: torch.Tensor, base: torch.Tensor, proj: torch.Tensor, side: int, block: int
) -> torch.Tensor:
    """Same contract as conv.grouped_dynamic_conv (float32 out)."""
    from .device import interpreting  # lazy: smoke.device loads only on this path

    m, hidden = y.shape
    taps = base.shape[1]
    groups = proj.shape[0] // (2 * taps)
    if m % block:
        raise ValueError(f"{m} rows are not whole blocks of {block}")
    f32 = torch.float32
    out = torch.empty(m, hidden, dtype=f32, device=y.device)
    block_h, block_k = _tiles(hidden, interpreting())
    grid = (m // block, triton.cdiv(hidden, block_h))
    if m:
        _conv_kernel[grid](
            h.to(f32).contiguous(),
            y.to(f32).contiguous(),
            proj.to(f32).contiguous(),
            base.to(f32).contiguous(),
            out,
            block,
            hidden,
            groups,
            hidden // groups,
            side,
            T=taps,
            BLOCK_B=triton.next_power_of_2(block),
            BLOCK_H=block_h,
            BLOCK_K=block_k,
        )
    return out
