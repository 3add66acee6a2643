"""Candidates, selector scores and the walk: torch reference and Triton kernel against plain loops."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("triton")

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st

from dflash2_ckpt.smoke.triton_walk import triton_walk  # noqa: E402
from dflash2_ckpt.smoke.walk import candidates, edge_scores, first_divergence_gap, gumbel_noise, mix32, walk  # noqa: E402


def case(q=2, n=5, k=4, r=6, v=30, seed=0, integer=False):
    gen = torch.Generator().manual_seed(seed)
    if integer:
        # small integers: every sum is exact in f32, so ties are real and both sides see the same ones
        def draw(*shape):
            return torch.randint(-2, 3, shape, generator=gen).to(torch.float32)
    else:

        def draw(*shape):
            return torch.randn(*shape, generator=gen)

    u = draw(q, n, k)
    ids = torch.stack(
        [torch.stack([torch.randperm(v, generator=gen)[:k] for _ in range(n)]) for _ in range(q)]
    )
    return u, ids, draw(q, n, r), draw(v, r), draw(v, r), torch.randint(0, v, (q,), generator=gen)


def loop_walk(u, ids, z, a_cb, b_cb, anchor):
    """docs/contract.md#candidates-selector-and-walk slot by slot, scoring only the predecessor actually
    chosen."""
    q_, n, k = ids.shape
    out = []
    for qi in range(q_):
        pred, path = int(anchor[qi]), []
        for j in range(n):
            best, best_c = None, None
            for c in range(k):
                s = float(u[qi, j, c]) + sum(
                    float(a_cb[pred, r]) * float(z[qi, j, r]) * float(b_cb[ids[qi, j, c], r])
                    for r in range(z.shape[-1])
                )
                if best is None or s > best:  # strict: the lowest index keeps a tie
                    best, best_c = s, c
            pred = int(ids[qi, j, best_c])
            path.append(pred)
        out.append(path)
    return torch.tensor(out)


def test_edge_scores_match_definition():
    u, ids, z, a_cb, b_cb, anchor = case(seed=1)
    s = edge_scores(u, ids, z, a_cb, b_cb, anchor)
    assert s.shape == (2, 5, 4, 4)
    for qi in range(2):
        for j in range(5):
            for p in range(4):
                pred = int(anchor[qi]) if j == 0 else int(ids[qi, j - 1, p])
                want = u[qi, j] + (a_cb[pred] * z[qi, j] * b_cb[ids[qi, j]]).sum(-1)
                torch.testing.assert_close(s[qi, j, p], want)


@pytest.mark.parametrize("seed", range(4))
def test_torch_and_triton_walk_match_loop(seed):
    u, ids, z, a_cb, b_cb, anchor = case(seed=seed)
    want = loop_walk(u, ids, z, a_cb, b_cb, anchor)
    assert torch.equal(walk(edge_scores(u, ids, z, a_cb, b_cb, anchor), ids).tokens, want)
    assert torch.equal(triton_walk(u, ids, z, a_cb, b_cb, anchor)[0], want)


@settings(max_examples=15, deadline=None)
@given(
    q=st.integers(1, 3),
    n=st.integers(1, 6),
    k=st.integers(1, 9),
    r=st.integers(1, 7),
    seed=st.integers(0, 9999),
)
def test_greedy_triton_equals_torch_exactly_with_ties(q, n, k, r, seed):
    u, ids, z, a_cb, b_cb, anchor = case(q, n, k, r, v=max(k, 12), seed=seed, integer=True)
    ref = walk(edge_scores(u, ids, z, a_cb, b_cb, anchor), ids)
    tok, picks, q_ = triton_walk(u, ids, z, a_cb, b_cb, anchor)
    assert q_ is None
    assert torch.equal(tok, ref.tokens) and torch.equal(picks, ref.picks)
    assert torch.equal(tok, loop_walk(u, ids, z, a_cb, b_cb, anchor))


def test_ties_go_to_the_lowest_index():
    u = torch.tensor([[[1.0, 3.0, 3.0, 3.0], [2.0, 2.0, 0.0, 2.0]]])
    ids = torch.tensor([[[5, 6, 7, 8], [9, 4, 3, 2]]])
    z, cb = torch.zeros(1, 2, 3), torch.zeros(10, 3)
    anchor = torch.tensor([0])
    assert walk(edge_scores(u, ids, z, cb, cb, anchor), ids).tokens.tolist() == [[6, 9]]
    assert triton_walk(u, ids, z, cb, cb, anchor)[0].tolist() == [[6, 9]]


@pytest.mark.parametrize("seed", range(3))
def test_zero_codebook_is_independent_argmax(seed):
    u, ids, z, a_cb, b_cb, anchor = case(seed=seed)
    a_cb.zero_()
    want = ids.gather(-1, u.argmax(-1, keepdim=True)).squeeze(-1)
    assert torch.equal(walk(edge_scores(u, ids, z, a_cb, b_cb, anchor), ids).tokens, want)
    assert torch.equal(triton_walk(u, ids, z, a_cb, b_cb, anchor)[0], want)


def test_k1_is_the_per_slot_argmax_of_the_head():
    gen = torch.Generator().manual_seed(5)
    g, head = torch.randn(2, 6, 16, generator=gen), torch.randn(50, 16, generator=gen)
    ids, u = candidates(g, head, 1)
    _, _, z, a_cb, b_cb, anchor = case(2, 6, 1, 4, v=50, seed=5)
    want = (g @ head.t()).argmax(-1)
    assert torch.equal(walk(edge_scores(u, ids, z, a_cb, b_cb, anchor), ids).tokens, want)
    assert torch.equal(triton_walk(u, ids, z, a_cb, b_cb, anchor)[0], want)


def test_candidates_apply_multiplier_then_softcap():
    g, head = torch.tensor([[[1.0, 0.0]]]), torch.tensor([[4.0, 0.0], [1.0, 0.0], [-2.0, 0.0]])
    ids, u = candidates(g, head, 2, multiplier=2.0, softcap=5.0)
    assert ids.tolist() == [[[0, 1]]]
    torch.testing.assert_close(u, 5.0 * torch.tanh(torch.tensor([[[8.0, 2.0]]]) / 5.0))


def test_mix32_matches_uint32_arithmetic():
    xs = np.array([0, 1, 7, 2**31 - 1, 2**31, 2**32 - 1, 123456789], dtype=np.uint64)

    def ref(x):
        x = x & 0xFFFFFFFF
        x ^= x >> 16
        x = (x * 0x7FEB352D) & 0xFFFFFFFF
        x ^= x >> 15
        x = (x * 0x846CA68B) & 0xFFFFFFFF
        return x ^ (x >> 16)

    assert mix32(torch.tensor(xs.astype(np.int64))).tolist() == [int(v) for v in ref(xs)]


def test_sampled_walk_same_tokens_and_normalised_q():
    u, ids, z, a_cb, b_cb, anchor = case(q=3, n=6, k=5, seed=11)
    seeds, pos = torch.tensor([1, 2, 3]), torch.tensor([40, 41, 42])
    scores = edge_scores(u, ids, z, a_cb, b_cb, anchor)
    ref = walk(scores, ids, temperature=0.8, seeds=seeds, positions=pos)
    tok, picks, q = triton_walk(u, ids, z, a_cb, b_cb, anchor, temperature=0.8, seeds=seeds, positions=pos)
    assert torch.equal(tok, ref.tokens)
    torch.testing.assert_close(q.sum(-1), torch.ones(3, 6))
    torch.testing.assert_close(q, ref.q, rtol=1e-5, atol=1e-6)
    # q is the softmax of the chosen predecessor's row
    prev = torch.cat([torch.zeros(3, 1, dtype=torch.long), ref.picks[:, :-1]], 1)  # [Q, N]
    rows = scores[torch.arange(3).view(3, 1), torch.arange(6).view(1, 6), prev]  # [Q, N, K]
    torch.testing.assert_close(ref.q, torch.softmax(rows / 0.8, -1))
    again = triton_walk(u, ids, z, a_cb, b_cb, anchor, temperature=0.8, seeds=seeds, positions=pos)[0]
    assert torch.equal(again, tok)
    other = triton_walk(u, ids, z, a_cb, b_cb, anchor, temperature=0.8, seeds=seeds + 1, positions=pos)[0]
    assert other.shape == tok.shape


def test_sampling_follows_q():
    """Gumbel-max with hashed noise samples from softmax: frequencies over many seeds track q."""
    u = torch.tensor([[[1.0, 0.0, -1.0, 0.5]]])
    ids = torch.tensor([[[3, 1, 2, 0]]])
    zeros = torch.zeros(1, 1, 2)
    cb = torch.zeros(4, 2)
    seeds = torch.arange(4000)
    tok = walk(
        edge_scores(
            u.expand(4000, 1, 4),
            ids.expand(4000, 1, 4),
            zeros.expand(4000, 1, 2),
            cb,
            cb,
            torch.zeros(4000, dtype=torch.long),
        ),
        ids.expand(4000, 1, 4),
        temperature=1.0,
        seeds=seeds,
        positions=torch.zeros(4000, dtype=torch.long),
    )
    freq = torch.bincount(tok.picks.view(-1), minlength=4).float() / 4000
    torch.testing.assert_close(freq, torch.softmax(u.view(-1), 0), atol=0.03, rtol=0)
    noise = gumbel_noise(torch.tensor(1), torch.tensor(2), torch.arange(4))
    assert torch.equal(noise, gumbel_noise(torch.tensor(1), torch.tensor(2), torch.arange(4)))


def test_first_divergence_gap_reports_slot():
    u, ids, z, a_cb, b_cb, anchor = case(seed=2)
    s = edge_scores(u, ids, z, a_cb, b_cb, anchor)
    ref = walk(s, ids)
    assert first_divergence_gap(s, ref, ref.picks) is None
    other = ref.picks.clone()
    other[1, 2] = (other[1, 2] + 1) % 4
    qi, j, gap = first_divergence_gap(s, ref, other)
    assert (qi, j) == (1, 2) and gap > 0
