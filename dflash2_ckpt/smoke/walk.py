"""Candidates, selector edge scores and the path walk: torch reference
(docs/contract.md#candidates-selector-and-walk).

Shapes: Q requests, N = B − 1 slots, K candidates, R selector rank, V vocabulary.
The Gumbel noise is a counter-based hash of (seed, position, candidate token id) so the Triton
kernel and this reference draw bit-identical noise without sharing a generator.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

_MASK32 = 0xFFFFFFFF


def candidates(
    g: torch.Tensor, head: torch.Tensor, k: int, multiplier: float = 1.0, softcap: float | None = None
) -> tuple[torch.Tensor, torch.Tensor]:
    """(ids [Q, N, K], u [Q, N, K]): top-K of the target head over the full vocabulary, then the
    output multiplier, then the softcap — in that order."""
    logits = g @ head.t()
    v, ids = torch.topk(logits, k, dim=-1, sorted=True)
    u = v * multiplier
    if softcap:
        u = softcap * torch.tanh(u / softcap)
    return ids, u


def edge_scores(
    u: torch.Tensor,
    ids: torch.Tensor,
    z: torch.Tensor,
    pred_cb: torch.Tensor,
    succ_cb: torch.Tensor,
    anchor: torch.Tensor,
) -> torch.Tensor:
    """S[q, j, p, c] = u[q, j, c] + Σ_r A[pred(j, p), r] · z[q, j, r] · Bc[ids[q, j, c], r]; [Q, N, K, K].

    pred(0, p) is the anchor for every p; pred(j, p) = ids[q, j − 1, p] for j ≥ 1.
    """
    q_, n, k = ids.shape
    preds = torch.empty_like(ids)
    preds[:, 0, :] = anchor.view(q_, 1)
    preds[:, 1:, :] = ids[:, :-1, :]
    a = pred_cb[preds] * z.unsqueeze(2)  # [Q, N, K(p), R]
    b = succ_cb[ids]  # [Q, N, K(c), R]
    return u.unsqueeze(2) + torch.einsum("qjpr,qjcr->qjpc", a, b)


def _mul32(x: torch.Tensor, c: int) -> torch.Tensor:
    # (x · c) mod 2^32 on int64 without overflowing: split x into 16-bit halves
    lo = (x & 0xFFFF) * c
    hi = ((x >> 16) * c) & 0xFFFF
    return (lo + (hi << 16)) & _MASK32


def mix32(x: torch.Tensor) -> torch.Tensor:
    """lowbias32 integer hash on values held in int64; the Triton kernel runs it on uint32."""
    x = x & _MASK32
    x = x ^ (x >> 16)
    x = _mul32(x, 0x7FEB352D)
    x = x ^ (x >> 15)
    x = _mul32(x, 0x846CA68B)
    return x ^ (x >> 16)


def gumbel_noise(seed: torch.Tensor, position: torch.Tensor, token: torch.Tensor) -> torch.Tensor:
    """Gumbel(0, 1) noise keyed by request seed, absolute position and candidate token id (broadcast)."""
    h = mix32(token.long() ^ mix32(position.long() ^ mix32(seed.long())))
    uni = ((h >> 8).to(torch.float32) + 0.5) * (1.0 / 16777216.0)  # 24 bits, strictly inside (0, 1)
    return -torch.log(-torch.log(uni))


@dataclass
class WalkResult:
    tokens: torch.Tensor  # [Q, N] drafted token ids
    picks: torch.Tensor  # [Q, N] chosen candidate index per slot
    q: torch.Tensor | None  # [Q, N, K] proposal distribution (sampled walks only)


def walk(
    scores: torch.Tensor,
    ids: torch.Tensor,
    *,
    temperature: float = 0.0,
    seeds: torch.Tensor | None = None,
    positions: torch.Tensor | None = None,
) -> WalkResult:
    """k_0 = pick(S[0, 0, :]), k_j = pick(S[j, k_{j−1}, :]).

    Greedy (temperature 0): argmax, ties to the lowest index. Sampled: Gumbel-max over
    S / temperature with noise at absolute position positions[q] + j; q_j = softmax(S / temperature).
    """
    q_, n, k, _ = scores.shape
    rows = torch.arange(q_, device=scores.device)
    prev = torch.zeros(q_, dtype=torch.long, device=scores.device)
    tokens = torch.empty(q_, n, dtype=ids.dtype, device=ids.device)
    picks = torch.empty(q_, n, dtype=torch.long, device=ids.device)
    probs = torch.empty(q_, n, k, dtype=scores.dtype, device=scores.device) if temperature > 0 else None
    for j in range(n):
        s = scores[rows, j, prev]  # [Q, K]
        if temperature > 0:
            assert seeds is not None and positions is not None and probs is not None
            logits = s / temperature
            probs[:, j] = torch.softmax(logits, dim=-1)
            noise = gumbel_noise(seeds.view(q_, 1), (positions + j).view(q_, 1), ids[:, j])
            key = logits + noise
        else:
            key = s
        prev = torch.argmax(key, dim=-1)  # first maximum on ties
        picks[:, j] = prev
        tokens[:, j] = ids[rows, j, prev]
    return WalkResult(tokens, picks, probs)


def first_divergence_gap(
    scores: torch.Tensor, a: WalkResult, b_picks: torch.Tensor
) -> tuple[int, int, float] | None:
    """Where two walks over the same scores first part ways: (request, slot, score gap under walk a).

    A gap near zero means a tie broken differently by float rounding, not a wrong kernel.
    """
    diff = (a.picks != b_picks).nonzero()
    if diff.numel() == 0:
        return None
    qi, j = (int(v) for v in min(diff.tolist()))
    prev = 0 if j == 0 else int(a.picks[qi, j - 1])
    row = scores[qi, j, prev]
    gap = float(row[a.picks[qi, j]] - row[b_picks[qi, j]])
    return qi, j, abs(gap)
