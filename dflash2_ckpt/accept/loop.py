"""Block speculative decoding with greedy verification, and the target's own greedy decoding to compare.

One step: the drafter sees the target's tapped hidden states of every committed token but the last
(the anchor, which the target has not run yet: its hidden state arrives with the verify) and proposes
B − 1 tokens; the target runs [anchor, drafts] in ONE forward over its KV cache; the longest prefix of
drafts equal to the target's own greedy tokens is accepted, the target's token after it is the bonus;
the taps of the anchor and the accepted drafts extend the drafter's context, the rest of the cache
is cropped. Both decoders stop after max_new tokens or an end-of-sequence token.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import torch

from .target import Target


@dataclass
class Decoded:
    tokens: list[int]
    seconds: float
    forwards: int                                   # target forwards, prefill included
    accepted: list[int] = field(default_factory=list)   # accepted drafts per verification step


def _finish(tokens: list[int], max_new: int, eos: set[int]) -> list[int]:
    tokens = tokens[:max_new]
    for i, t in enumerate(tokens):
        if t in eos:
            return tokens[:i + 1]
    return tokens


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def greedy(target: Target, prompt: list[int], max_new: int) -> Decoded:
    """The target alone, one token per forward over the cache: the reference output and speed."""
    eos = target.eos_ids()
    _sync(target.device)
    t0 = time.perf_counter()
    target.reset()
    nxt, _ = target.forward(prompt, taps=False)
    out, forwards = [int(nxt[-1])], 1
    while len(out) < max_new and out[-1] not in eos:
        nxt, _ = target.forward([out[-1]], taps=False)
        out.append(int(nxt[-1]))
        forwards += 1
    _sync(target.device)
    return Decoded(_finish(out, max_new, eos), time.perf_counter() - t0, forwards)


def speculative(target: Target, drafter: Any, prompt: list[int], max_new: int) -> Decoded:
    """drafter: a smoke.drafting.Drafter (its block_size sets B)."""
    eos = target.eos_ids()
    _sync(target.device)
    t0 = time.perf_counter()
    target.reset()
    nxt, taps = target.forward(prompt)
    assert taps is not None
    context = taps.to(drafter.device)                # hidden states of every committed token but the anchor
    out, accepted, forwards = [int(nxt[-1])], [], 1
    while len(out) < max_new and out[-1] not in eos:
        anchor = out[-1]
        drafts = drafter.draft(context.unsqueeze(0), torch.tensor([anchor])).greedy[0].tolist()
        kept = target.cached()
        nxt, taps = target.forward([anchor, *drafts])
        assert taps is not None
        verified = nxt.tolist()
        a = 0
        while a < len(drafts) and drafts[a] == verified[a]:
            a += 1
        out += drafts[:a] + [verified[a]]
        accepted.append(a)
        forwards += 1
        context = torch.cat([context, taps[:a + 1].to(drafter.device)], dim=0)
        target.crop(kept + a + 1)                    # the rejected rows leave the cache
    _sync(target.device)
    return Decoded(_finish(out, max_new, eos), time.perf_counter() - t0, forwards, accepted)
