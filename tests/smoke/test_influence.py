"""Selector / conv influence: inert only by weights; a live selector is measured over sampled contexts."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st

from dflash2_ckpt.smoke.influence import conv_finding, selector_inert_reason, selector_influence  # noqa: E402
from dflash2_ckpt.smoke.walk import edge_scores, walk  # noqa: E402

V, R, H, Q, N, K = 50, 8, 16, 2, 7, 4


def sample(seed: int) -> tuple[torch.Tensor, ...]:
    g = torch.Generator().manual_seed(seed)
    ids = torch.stack([torch.randperm(V, generator=g)[:K] for _ in range(Q * N)]).view(Q, N, K)
    u = torch.randn(Q, N, K, generator=g).sort(-1, descending=True).values
    z = torch.randn(Q, N, R, generator=g)
    return ids, u, z, 3 * torch.randn(V, R, generator=g), 3 * torch.randn(V, R, generator=g)


def test_reasons() -> None:
    _, _, _, a, b = sample(0)
    p = torch.randn(R, H)
    assert selector_inert_reason(a, b, p) is None
    assert "projection" in str(selector_inert_reason(a, b, torch.zeros(R, H)))
    assert "predecessor" in str(selector_inert_reason(torch.zeros_like(a), b, p))
    assert "successor codebook is zero" in str(selector_inert_reason(a, torch.zeros_like(b), p))
    assert "same" in str(selector_inert_reason(a, b[:1].expand(V, R).clone(), p))
    assert selector_inert_reason(a[:1].expand(V, R).clone(), b, p) is None  # equal predecessors still re-rank


@settings(max_examples=20, deadline=None)
@given(st.integers(0, 10_000))
def test_inert_weights_change_no_slot_and_live_ones_are_measured(seed: int) -> None:
    ids, u, z, a, b = sample(seed)
    assert selector_influence(ids, u, z, torch.zeros_like(a), b, V, seed, contexts=64) == 0.0
    assert selector_influence(ids, u, z, a, b[:1].expand(V, R).clone(), V, seed, contexts=64) == 0.0
    frac = selector_influence(ids, u, z, a, b, V, seed, contexts=64)
    assert 0.0 <= frac <= 1.0
    assert selector_influence(ids, u, z, a, b, V, seed, contexts=64) == frac  # seeded


def test_measured_fraction_matches_a_direct_walk_on_the_smoke_slots() -> None:
    """With one context per request and anchors the same, the sampler is the plain walk."""
    ids, u, z, a, b = sample(3)
    direct = walk(edge_scores(u, ids, z, a, b, torch.tensor([5, 9])), ids).tokens
    independent = ids.gather(-1, u.argmax(-1, keepdim=True)).squeeze(-1)
    assert float((direct != independent).float().mean()) > 0  # this sample does move slots
    assert selector_influence(ids, u, z, a, b, V, 0, contexts=512) > 0


def test_conv_finding_skips_identity_modules() -> None:
    convs = {"a": {"relative_change": 0.0, "slots_changed": 0.0, "identity_init": True}}
    assert conv_finding(convs, 0.0, 14) == []
    convs["b"] = {"relative_change": 0.2, "slots_changed": 0.5, "identity_init": False}
    f = conv_finding(convs, 0.5, 14)[0]
    assert f.code == "DF715" and f.details["modules"] == 1 and f.severity == "info"
