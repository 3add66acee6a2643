"""The selector walk as one Triton program per request.

The K scores of a slot stay in registers; the slot-to-slot dependency (slot j's predecessor is the
token picked at slot j − 1) is a loop inside the program, so a whole path costs one launch.
Scores are computed in-kernel from the codebooks: only the row of the chosen predecessor is read,
never the full [N, K, K] tensor. Import this module only after the Triton mode is set (see device.py).
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl


@triton.jit
def _mix32(x):
    # lowbias32; walk.mix32 is the torch twin (uint32 arithmetic wraps mod 2^32)
    x ^= x >> 16
    x *= 0x7FEB352D
    x ^= x >> 15
    x *= 0x846CA68B
    x ^= x >> 16
    return x


@triton.jit
def _walk_kernel(
    u_ptr,
    ids_ptr,
    z_ptr,
    pred_cb_ptr,
    succ_cb_ptr,
    anchor_ptr,
    seed_ptr,
    pos_ptr,
    tok_ptr,
    pick_ptr,
    q_ptr,
    N,
    K,
    R,
    inv_temp,
    SAMPLED: tl.constexpr,
    BLOCK_K: tl.constexpr,
    BLOCK_R: tl.constexpr,
):
    req = tl.program_id(0)
    offs_k = tl.arange(0, BLOCK_K)
    kmask = offs_k < K
    pred = tl.load(anchor_ptr + req).to(tl.int64)
    seed = tl.load(seed_ptr + req).to(tl.uint32)
    start = tl.load(pos_ptr + req)
    for j in range(N):
        row = (req * N + j).to(tl.int64)
        u = tl.load(u_ptr + row * K + offs_k, mask=kmask, other=0.0)
        ids = tl.load(ids_ptr + row * K + offs_k, mask=kmask, other=0).to(tl.int64)
        edge = tl.zeros([BLOCK_K], dtype=tl.float32)
        for r0 in range(0, R, BLOCK_R):
            offs_r = r0 + tl.arange(0, BLOCK_R)
            rmask = offs_r < R
            a = tl.load(pred_cb_ptr + pred * R + offs_r, mask=rmask, other=0.0)
            z = tl.load(z_ptr + row * R + offs_r, mask=rmask, other=0.0)
            b = tl.load(
                succ_cb_ptr + ids[:, None] * R + offs_r[None, :],
                mask=kmask[:, None] & rmask[None, :],
                other=0.0,
            )
            edge += tl.sum(b * (a * z)[None, :], axis=1)
        s = tl.where(kmask, u + edge, float("-inf"))
        if SAMPLED:
            logits = s * inv_temp
            p = tl.exp(logits - tl.max(logits, axis=0))
            p = tl.where(kmask, p, 0.0)
            tl.store(q_ptr + row * K + offs_k, p / tl.sum(p, axis=0), mask=kmask)
            zero = tl.zeros([BLOCK_K], dtype=tl.uint32)
            pos = zero + (start + j).to(tl.uint32)
            h = _mix32(ids.to(tl.uint32) ^ _mix32(pos ^ _mix32(zero + seed)))
            uni = ((h >> 8).to(tl.float32) + 0.5) * (1.0 / 16777216.0)
            key = tl.where(kmask, logits - tl.log(-tl.log(uni)), float("-inf"))
        else:
            key = s
        best = tl.max(key, axis=0)
        pick = tl.min(tl.where((key == best) & kmask, offs_k, BLOCK_K), axis=0)  # lowest index wins ties
        tok = tl.sum(tl.where(offs_k == pick, ids, 0), axis=0)
        tl.store(pick_ptr + row, pick.to(tl.int64))
        tl.store(tok_ptr + row, tok)
        pred = tok


def triton_walk(
    u: torch.Tensor,
    ids: torch.Tensor,
    z: torch.Tensor,
    pred_cb: torch.Tensor,
    succ_cb: torch.Tensor,
    anchor: torch.Tensor,
    *,
    temperature: float = 0.0,
    seeds: torch.Tensor | None = None,
    positions: torch.Tensor | None = None,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor | None]:
    """(tokens [Q, N], picks [Q, N], q [Q, N, K] or None); same contract as walk.walk on edge_scores."""
    q_, n, k = ids.shape
    r = z.shape[-1]
    dev = u.device
    f32 = torch.float32
    sampled = temperature > 0
    if seeds is None:
        seeds = torch.zeros(q_, dtype=torch.long)
    if positions is None:
        positions = torch.zeros(q_, dtype=torch.long)
    tokens = torch.empty(q_, n, dtype=torch.long, device=dev)
    picks = torch.empty(q_, n, dtype=torch.long, device=dev)
    probs = torch.empty(q_, n, k, dtype=f32, device=dev) if sampled else torch.empty(1, dtype=f32, device=dev)
    if n > 0:
        _walk_kernel[(q_,)](
            u.to(f32).contiguous(),
            ids.long().contiguous(),
            z.to(f32).contiguous(),
            pred_cb.to(f32).contiguous(),
            succ_cb.to(f32).contiguous(),
            anchor.long().to(dev).contiguous(),
            (seeds.long() & 0xFFFFFFFF).to(dev).contiguous(),
            positions.long().to(dev).contiguous(),
            tokens,
            picks,
            probs,
            n,
            k,
            r,
            (1.0 / temperature) if sampled else 1.0,
            SAMPLED=sampled,
            BLOCK_K=triton.next_power_of_2(k),
            BLOCK_R=min(triton.next_power_of_2(r), 128),
        )
    return tokens, picks, probs if sampled else None
