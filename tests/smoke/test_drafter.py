"""The reference drafter: masks, RoPE, context path, and identity conv == DFlash v1."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("triton")

from dflash2_ckpt.formats.spec import CausalityKeys  # noqa: E402
from dflash2_ckpt.smoke.drafter import ForwardOptions, RefDrafter, apply_rope, block_mask, rope_tables  # noqa: E402
from dflash2_ckpt.smoke.triton_conv import triton_grouped_dynamic_conv  # noqa: E402

from ._smoke_tiny import tiny_embed, tiny_params, tiny_spec  # noqa: E402


def drafter(spec, **kw):
    params = tiny_params(spec, **kw)
    return RefDrafter(spec, params, tiny_embed(spec)["embed_tokens.weight"]), params


def inputs(spec, q=2, n_ctx=7, seed=0):
    gen = torch.Generator().manual_seed(seed)
    return torch.randn(q, n_ctx, spec.fc_in_features, generator=gen), torch.randint(
        0, spec.vocab_size, (q,), generator=gen
    )


def test_block_mask_causal_bidirectional_and_sliding():
    m = block_mask(3, 4, causal=True, window=None, device=torch.device("cpu"))
    assert m[:, :3].all() and torch.equal(m[:, 3:], torch.ones(4, 4).tril().bool())
    assert block_mask(3, 4, causal=False, window=None, device=torch.device("cpu")).all()
    w = block_mask(3, 4, causal=False, window=2, device=torch.device("cpu"))
    blk = w[:, 3:]
    assert torch.equal(blk, blk.T)  # bidirectional sliding is symmetric
    assert all(bool(blk[i, j]) == (abs(i - j) < 2) for i in range(4) for j in range(4))
    assert w[0].tolist()[:3] == [False, False, True]  # query at position 3 sees context 2 only
    wc = block_mask(3, 4, causal=True, window=2, device=torch.device("cpu"))[:, 3:]
    assert torch.equal(wc, blk & torch.ones(4, 4).tril().bool())


def test_rope_is_a_rotation_and_relative():
    spec = tiny_spec()
    cos, sin = rope_tables(spec, torch.arange(10))
    gen = torch.Generator().manual_seed(0)
    q, k = torch.randn(8, generator=gen), torch.randn(8, generator=gen)
    rq, rk = apply_rope(q.expand(10, 8), cos, sin), apply_rope(k.expand(10, 8), cos, sin)
    torch.testing.assert_close(rq.norm(dim=-1), q.norm().expand(10))
    # the score depends only on the distance between positions
    torch.testing.assert_close(rq[5] @ rk[3], rq[7] @ rk[5], rtol=1e-5, atol=1e-5)
    lin = tiny_spec(rope_scaling={"rope_type": "linear", "factor": 2.0})
    c2, _ = rope_tables(lin, torch.arange(10))
    torch.testing.assert_close(c2[4], cos[2])


def test_identity_conv_v2_equals_v1_forward_of_same_trunk():
    spec = tiny_spec("v2")
    d, _ = drafter(spec, identity_conv=True)
    hidden, anchors = inputs(spec)
    g_v2 = d.forward(hidden, anchors, 5, spec.mask_token_id)
    g_v1 = d.forward(hidden, anchors, 5, spec.mask_token_id, ForwardOptions(conv=None))
    torch.testing.assert_close(g_v2, g_v1, rtol=1e-6, atol=1e-6)
    g_tr = d.forward(hidden, anchors, 5, spec.mask_token_id, ForwardOptions(conv=triton_grouped_dynamic_conv))
    torch.testing.assert_close(g_tr, g_v1, rtol=1e-6, atol=1e-6)
    # and a v1 spec over the same trunk tensors drafts the same final hidden states
    v1 = tiny_spec("v1")
    params = {k: v for k, v in tiny_params(spec, identity_conv=True).items() if k in tiny_params(v1)}
    torch.testing.assert_close(
        RefDrafter(v1, params, d.embed).forward(hidden, anchors, 5, spec.mask_token_id),
        g_v1,
        rtol=1e-6,
        atol=1e-6,
    )


def test_trained_conv_changes_the_output_and_identity_override_removes_it():
    spec = tiny_spec("v2")
    d, _ = drafter(spec)
    hidden, anchors = inputs(spec)
    g = d.forward(hidden, anchors, 5, spec.mask_token_id)
    g_v1 = d.forward(hidden, anchors, 5, spec.mask_token_id, ForwardOptions(conv=None))
    assert not torch.allclose(g, g_v1, atol=1e-3)
    every = [f"layers.{i}.{m}" for i in range(2) for m in ("attention_conv", "mlp_conv")]
    g_id = d.forward(hidden, anchors, 5, spec.mask_token_id, ForwardOptions(identity=every))
    torch.testing.assert_close(g_id, g_v1, rtol=1e-6, atol=1e-6)


def test_context_reaches_the_block_and_causality_matters():
    spec = tiny_spec("v2", layer_types=("full_attention", "full_attention"), sliding_window=None)
    d, _ = drafter(spec)
    hidden, anchors = inputs(spec)
    g = d.forward(hidden, anchors, 5, spec.mask_token_id)
    hidden2 = hidden.clone()
    hidden2[:, 0] += 1.0
    assert not torch.allclose(g, d.forward(hidden2, anchors, 5, spec.mask_token_id))
    # full-attention layers are bidirectional under vLLM's rule; is_causal=True makes them causal
    causal = tiny_spec(
        "v2",
        layer_types=("full_attention", "full_attention"),
        sliding_window=None,
        causality=CausalityKeys(is_causal=True),
    )
    dc = RefDrafter(causal, d.p, d.embed)
    assert dc.causal == (True, True) and d.causal == (False, False)
    assert not torch.allclose(g, dc.forward(hidden, anchors, 5, spec.mask_token_id))


def test_output_skips_the_anchor_row_and_is_finite():
    spec = tiny_spec("v2", block_size=8)
    d, _ = drafter(spec)
    hidden, anchors = inputs(spec, q=3)
    opts = ForwardOptions()
    g = d.forward(hidden, anchors, 8, spec.mask_token_id, opts)
    assert g.shape == (3, 7, spec.hidden_size) and torch.isfinite(g).all()
    assert list(opts.stages) == ["context", "layer0", "layer1", "final_norm"]
