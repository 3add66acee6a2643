"""Grouped dynamic depthwise convolution, torch reference (docs/contract.md#grouped-dynamic-convolution).

Rows are stacked blocks of length B; the tap offset never crosses a block boundary, so a row's
position inside its block is its index modulo B.
"""

from __future__ import annotations

import torch


def conv_delta(h: torch.Tensor, proj: torch.Tensor, side: int, taps: int) -> torch.Tensor:
    """δ for one side: [M, T, G] from the sublayer input h [M, H] and kernel_projection [2·T·G, H]."""
    m = h.shape[0]
    groups = proj.shape[0] // (2 * taps)
    delta = (h @ proj.t()).view(m, 2, taps, groups)
    return delta[:, side]


def grouped_dynamic_conv(
    y: torch.Tensor, h: torch.Tensor, base: torch.Tensor, proj: torch.Tensor, side: int, block: int
) -> torch.Tensor:
    """conv_side(y)[i, c] = Σ_t [i ≥ t] (base[side, t, c] + δ[i, t, c // gs]) · y[i − t, c].

    y, h: [M, H] with M a multiple of `block`; base [2, T, H]; proj [2·T·G, H].
    """
    m, hidden = y.shape
    taps = base.shape[1]
    if m % block:
        raise ValueError(f"{m} rows are not whole blocks of {block}")
    delta = conv_delta(h, proj, side, taps)  # [M, T, G]
    gs = hidden // delta.shape[-1]
    coef = base[side].unsqueeze(0) + delta.repeat_interleave(gs, dim=-1)  # [M, T, H]
    yb = y.view(m // block, block, hidden)
    cb = coef.view(m // block, block, taps, hidden)
    out = torch.zeros_like(yb)
    for t in range(min(taps, block)):
        # row i reads row i − t of the same block; rows i < t have no tap t
        out[:, t:] += cb[:, t:, t] * yb[:, : block - t]
    return out.view(m, hidden)


def identity_conv_weights(
    taps: int, hidden: int, groups: int, *, like: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    """(base, proj) of a convolution that is exactly the identity: tap 0 = 1, other taps 0, W = 0."""
    base = torch.zeros(2, taps, hidden, dtype=like.dtype, device=like.device)
    base[:, 0, :] = 1.0
    proj = torch.zeros(2 * taps * groups, hidden, dtype=like.dtype, device=like.device)
    return base, proj


def is_identity(base: torch.Tensor, proj: torch.Tensor) -> bool:
    """True when the module's weights are the identity init (the state of an untrained conv)."""
    want = torch.zeros_like(base)
    want[:, 0, :] = 1.0
    return bool(torch.equal(base, want)) and not bool(proj.any())
