"""The public draft() API: every stage exposed, and each stage meets the reference's own expectations."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("triton")

import dflash2_ckpt.smoke as smoke_pkg  # noqa: E402
from dflash2_ckpt.errors import ConfigError  # noqa: E402
from dflash2_ckpt.smoke.drafting import Drafter, DraftResult  # noqa: E402

from ._smoke_tiny import tiny_embed, tiny_params, tiny_spec  # noqa: E402

FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "good" / "nested-v2"
Q, N_CTX = 3, 7


def make(version="v2", kernels="torch", **over) -> Drafter:
    spec = tiny_spec(version, **over)
    emb = tiny_embed(spec)
    return Drafter(
        spec,
        tiny_params(spec),
        emb["embed_tokens.weight"],
        emb["lm_head.weight"],
        spec.block_size,
        spec.mask_token_id,
        torch.device("cpu"),
        kernels,
    )


def inputs(d: Drafter, seed=0):
    gen = torch.Generator().manual_seed(seed)
    return (
        torch.randn(Q, N_CTX, d.spec.fc_in_features, generator=gen),
        torch.randint(0, d.spec.vocab_size - 1, (Q,), generator=gen),
    )


def rms(x, w, eps):
    return x / torch.sqrt((x * x).mean(-1, keepdim=True) + eps) * w


def test_every_stage_is_exposed_with_its_shape():
    d = make()
    hidden, anchors = inputs(d)
    r = d.draft(hidden, anchors, temperature=1.0, seeds=torch.arange(Q))
    s, n, k = d.spec, d.block_size - 1, d.spec.selector_top_k
    assert isinstance(r, DraftResult)
    assert r.context.shape == (Q, N_CTX, s.hidden_size) and r.hidden.shape == (Q, n, s.hidden_size)
    assert r.unary.shape == r.candidates.shape == (Q, n, k) and r.edge_scores.shape == (Q, n, k, k)
    assert r.selector_projection.shape == (Q, n, s.selector_rank)
    assert r.greedy.shape == r.sampled.shape == (Q, n) and r.q.shape == (Q, n, k)
    assert set(r.layers) == {f"layer{i}" for i in range(s.num_hidden_layers)}
    # context = hidden_norm(fc(taps)), written out independently
    want = rms(hidden @ d.params["fc.weight"].t(), d.params["hidden_norm.weight"], s.rms_norm_eps)
    assert torch.allclose(r.context, want, atol=1e-5)
    # unary = top-K of the head, sorted; candidate ids are those logits' indices
    logits = r.hidden @ d.head.t()
    assert torch.allclose(r.unary, logits.gather(-1, r.candidates), atol=1e-5)
    assert torch.equal(r.candidates, logits.topk(k, dim=-1).indices)
    # slot 0's predecessor is the anchor for every row p
    assert torch.allclose(r.edge_scores[:, 0, :1].expand_as(r.edge_scores[:, 0]), r.edge_scores[:, 0])
    # greedy walk: k_j = argmax S[j, k_{j-1}, :]
    prev = torch.zeros(Q, dtype=torch.long)
    for j in range(n):
        row = r.edge_scores[torch.arange(Q), j, prev]
        prev = row.argmax(-1)
        assert torch.equal(r.greedy[:, j], r.candidates[torch.arange(Q), j, prev])
    assert torch.allclose(r.q.sum(-1), torch.ones(Q, n), atol=1e-5)
    assert r.greedy.max() < s.vocab_size


def test_zero_codebooks_walk_is_the_independent_argmax_and_k1_the_head_argmax():
    d = make()
    p = dict(d.params)
    for name in ("candidate_selector.predecessor_codebook", "candidate_selector.successor_codebook"):
        p[name] = torch.zeros_like(p[name])
    r = d.replace(params=p).draft(*inputs(d))
    assert torch.equal(r.greedy, r.candidates[..., 0])
    r1 = make(selector_top_k=1).draft(*inputs(d))
    assert torch.equal(r1.greedy, (r1.hidden @ d.head.t()).argmax(-1))


def test_identity_conv_v2_drafts_like_v1_of_the_same_trunk():
    d = make()
    params = tiny_params(d.spec, identity_conv=True)
    v2 = d.replace(params=params).draft(*inputs(d))
    v1 = d.replace(params=params, spec=dataclasses.replace(d.spec, version="v1")).draft(*inputs(d))
    assert torch.allclose(v2.hidden, v1.hidden, atol=1e-5)
    assert v1.edge_scores is None and torch.equal(v1.greedy, v1.candidates[..., 0])


def test_triton_kernels_match_torch():
    d = make()
    a, b = (
        d.draft(*inputs(d), temperature=0.7, seeds=torch.arange(Q)),
        d.replace(kernels="triton").draft(*inputs(d), temperature=0.7, seeds=torch.arange(Q)),
    )
    assert torch.allclose(a.hidden, b.hidden, atol=1e-4)
    assert torch.equal(a.greedy, b.greedy) and torch.equal(a.sampled, b.sampled)
    assert torch.allclose(a.q, b.q, atol=1e-5)


def test_causality_override_changes_the_block_only():
    d = make(layer_types=("full_attention", "full_attention"))
    a = d.draft(*inputs(d))
    b = d.replace(causal_override=(True, True)).draft(*inputs(d))
    assert torch.equal(a.context, b.context) and not torch.allclose(a.hidden, b.hidden)


def test_bad_hidden_width_is_a_config_error():
    d = make()
    with pytest.raises(ConfigError, match="fc needs"):
        d.draft(torch.zeros(1, 4, 3), torch.zeros(1, dtype=torch.long))


@pytest.mark.skipif(not (FIXTURE / "config.json").is_file(), reason="fixtures not built")
def test_public_draft_from_a_directory_equals_a_loaded_drafter():
    d = smoke_pkg.load_drafter(FIXTURE, device="cpu")
    hidden = torch.randn(N_CTX, d.spec.fc_in_features, generator=torch.Generator().manual_seed(3))
    r = smoke_pkg.draft(FIXTURE, hidden, torch.tensor([5]), device="cpu")
    assert r.greedy.shape == (1, d.block_size - 1)
    assert torch.equal(r.greedy, d.draft(hidden, torch.tensor([5])).greedy)
    assert {f.code for f in d.findings} == {"DF711"}  # no target given: a seeded random embedding
    assert smoke_pkg.draft is not None and callable(smoke_pkg.draft)  # the submodule does not shadow it
