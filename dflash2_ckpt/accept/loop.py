"""Block speculative decoding with greedy verification, and the target's own greedy decoding to compare.

One step: the drafter sees the target's tapped hidden states of every committed token but the last
(the anchor, which the target has not run yet: its hidden state arrives with the verify) and proposes
B − 1 tokens; the target runs [anchor, drafts] in ONE forward over its KV cache; the longest prefix of
drafts equal to the target's own greedy tokens is accepted, the target's token after it is the bonus;
the taps of the anchor and the accepted drafts extend the drafter's context, the rest of the cache
is cropped. Both decoders stop after max_new tokens or an end-of-sequence token.

The drafter keeps its view of the context between steps (smoke.drafter.KeptContext: the projected taps
and every layer's context keys and values), so a step projects the newly committed tokens only and the
loop is linear in the tokens generated, not quadratic. `speculative_batch` decodes several prompts at
once: one target forward per step verifies every prompt's block (left padding, a per-row attention mask
for the rejected rows it keeps in the cache, explicit positions); each prompt's tokens and accepted
drafts are those it gets alone, since each row sees exactly its own tokens.
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
    forwards: int  # target forwards, prefill included
    accepted: list[int] = field(default_factory=list)  # accepted drafts per verification step


def _finish(tokens: list[int], max_new: int, eos: set[int]) -> list[int]:
    tokens = tokens[:max_new]
    for i, t in enumerate(tokens):
        if t in eos:
            return tokens[: i + 1]
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
    kept = drafter.keep_context()
    kept.extend(taps)  # hidden states of every committed token but the anchor
    out, accepted, forwards = [int(nxt[-1])], [], 1
    while len(out) < max_new and out[-1] not in eos:
        anchor = out[-1]
        drafts = drafter.draft(None, torch.tensor([anchor]), kept=kept).greedy[0].tolist()
        cached = target.cached()
        nxt, taps = target.forward([anchor, *drafts])
        assert taps is not None
        verified = nxt.tolist()
        a = 0
        while a < len(drafts) and drafts[a] == verified[a]:
            a += 1
        out += drafts[:a] + [verified[a]]
        accepted.append(a)
        forwards += 1
        kept.extend(taps[: a + 1])
        target.crop(cached + a + 1)  # the rejected rows leave the cache
    _sync(target.device)
    return Decoded(_finish(out, max_new, eos), time.perf_counter() - t0, forwards, accepted)


def speculative_batch(target: Target, drafter: Any, prompts: list[list[int]], max_new: int) -> list[Decoded]:
    """Every prompt decoded as `speculative` does, all of them verified by one target forward per step.
    Each prompt's seconds are the batch's wall time shared in proportion to the tokens it generated."""
    if len(prompts) == 1:
        return [speculative(target, drafter, prompts[0], max_new)]
    eos, block = target.eos_ids(), drafter.block_size
    _sync(target.device)
    t0 = time.perf_counter()
    target.reset()
    width = max(len(p) for p in prompts)
    ids = [[target.pad_id] * (width - len(p)) + list(p) for p in prompts]
    valid = torch.tensor([[False] * (width - len(p)) + [True] * len(p) for p in prompts])  # [Q, cache]
    seen = torch.tensor([len(p) for p in prompts])  # committed tokens per row
    positions = (valid.long().cumsum(1) - 1).clamp_min(0)
    nxt, taps = target.forward_rows(ids, valid, positions)
    kept = []
    for q, p in enumerate(prompts):
        kept.append(drafter.keep_context())
        kept[-1].extend(taps[q, width - len(p) :])
    outs = [[int(nxt[q, -1])] for q in range(len(prompts))]
    accepted: list[list[int]] = [[] for _ in prompts]
    rows = list(range(len(prompts)))  # prompts still decoding, cache order
    while True:
        live = [i for i, q in enumerate(rows) if len(outs[q]) < max_new and outs[q][-1] not in eos]
        if len(live) < len(rows):  # finished prompts leave the batch
            keep = torch.tensor(live, dtype=torch.long)
            if live:
                target.cache.batch_select_indices(keep.to(target.device))
            valid, seen, rows = valid[keep], seen[keep], [rows[i] for i in live]
        if not rows:
            break
        drafted = [
            drafter.draft(None, torch.tensor([outs[q][-1]]), kept=kept[q]).greedy[0].tolist() for q in rows
        ]
        block_ids = [[outs[q][-1], *d] for q, d in zip(rows, drafted)]
        positions = seen.view(-1, 1) + torch.arange(block).view(1, -1)
        nxt, taps = target.forward_rows(
            block_ids, torch.cat([valid, torch.ones(len(rows), block, dtype=torch.bool)], 1), positions
        )
        verified = nxt.tolist()
        took = []
        for i, q in enumerate(rows):
            a, d = 0, drafted[i]
            while a < len(d) and d[a] == verified[i][a]:
                a += 1
            outs[q] += d[:a] + [verified[i][a]]
            accepted[q].append(a)
            kept[q].extend(taps[i, : a + 1])
            took.append(a + 1)
        most = max(took)  # columns past every row's accepted ones leave the cache
        target.crop(valid.shape[1] + most)
        new = torch.arange(most).view(1, -1) < torch.tensor(took).view(-1, 1)
        valid = torch.cat([valid, new], 1)
        seen = seen + torch.tensor(took)
    _sync(target.device)
    wall = time.perf_counter() - t0
    done = [_finish(o, max_new, eos) for o in outs]
    total = sum(len(d) for d in done) or 1
    return [Decoded(d, wall * len(d) / total, 1 + len(a), a) for d, a in zip(done, accepted)]
