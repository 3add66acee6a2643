"""Grouped dynamic convolution: torch reference and Triton kernel against an explicit loop."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("triton")

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st

from dflash2_ckpt.smoke.conv import grouped_dynamic_conv, identity_conv_weights, is_identity  # noqa: E402
from dflash2_ckpt.smoke.triton_conv import triton_grouped_dynamic_conv  # noqa: E402


def loop_conv(y, h, base, proj, side, block):
    """docs/contract.md#grouped-dynamic-convolution literally:
    out[i, c] = Σ_t [i ≥ t] (base[s, t, c] + δ[i, s, t, c // gs]) · y[i − t, c]."""
    m, hidden = y.shape
    taps = base.shape[1]
    groups = proj.shape[0] // (2 * taps)
    gs = hidden // groups
    out = torch.zeros(m, hidden, dtype=torch.float64)
    for row in range(m):
        i = row % block  # position inside the block
        for c in range(hidden):
            acc = 0.0
            for t in range(taps):
                if i < t:
                    continue
                r = side * taps * groups + t * groups + c // gs
                delta = sum(float(proj[r, k]) * float(h[row, k]) for k in range(hidden))
                acc += (float(base[side, t, c]) + delta) * float(y[row - t, c])
            out[row, c] = acc
    return out.to(torch.float32)


def rand_case(blocks, block, taps, hidden, gs, seed):
    gen = torch.Generator().manual_seed(seed)
    groups = hidden // gs
    y = torch.randn(blocks * block, hidden, generator=gen)
    h = torch.randn(blocks * block, hidden, generator=gen)
    base = torch.randn(2, taps, hidden, generator=gen)
    proj = torch.randn(2 * taps * groups, hidden, generator=gen) * 0.3
    return y, h, base, proj


@pytest.mark.parametrize("block", [5, 8])
@pytest.mark.parametrize("taps", [1, 2, 3])
@pytest.mark.parametrize("hidden,gs", [(12, 4), (12, 3), (8, 8), (6, 1)])
@pytest.mark.parametrize("side", [0, 1])
def test_reference_and_kernel_match_loop(block, taps, hidden, gs, side):
    y, h, base, proj = rand_case(2, block, taps, hidden, gs, seed=block * 100 + taps * 10 + gs)
    want = loop_conv(y, h, base, proj, side, block)
    torch.testing.assert_close(
        grouped_dynamic_conv(y, h, base, proj, side, block), want, rtol=1e-5, atol=1e-5
    )
    torch.testing.assert_close(
        triton_grouped_dynamic_conv(y, h, base, proj, side, block), want, rtol=1e-5, atol=1e-5
    )


def test_taps_never_cross_a_block_boundary():
    y, h, base, proj = rand_case(3, 5, 3, 8, 4, seed=7)
    out = grouped_dynamic_conv(y, h, base, proj, 0, 5)
    # changing block 0 must not move blocks 1 and 2, even at their first rows
    y2 = y.clone()
    y2[:5] += 100.0
    out2 = grouped_dynamic_conv(y2, h, base, proj, 0, 5)
    torch.testing.assert_close(out[5:], out2[5:])
    assert not torch.allclose(out[:5], out2[:5])
    torch.testing.assert_close(
        triton_grouped_dynamic_conv(y2, h, base, proj, 0, 5)[5:], out[5:], rtol=1e-5, atol=1e-5
    )


def test_identity_weights_are_exactly_the_identity():
    y, h, _, _ = rand_case(2, 8, 3, 16, 4, seed=3)
    base, proj = identity_conv_weights(3, 16, 4, like=y)
    assert is_identity(base, proj)
    for side in (0, 1):
        assert torch.equal(grouped_dynamic_conv(y, h, base, proj, side, 8), y)
        assert torch.equal(triton_grouped_dynamic_conv(y, h, base, proj, side, 8), y)
    proj[0, 0] = 1e-3
    assert not is_identity(base, proj)


def test_rows_must_be_whole_blocks():
    y, h, base, proj = rand_case(1, 5, 2, 8, 4, seed=1)
    with pytest.raises(ValueError):
        grouped_dynamic_conv(y[:4], h[:4], base, proj, 0, 5)


@settings(max_examples=12, deadline=None)
@given(
    blocks=st.integers(1, 3),
    block=st.integers(1, 9),
    taps=st.integers(1, 4),
    groups=st.integers(1, 4),
    gs=st.integers(1, 5),
    side=st.integers(0, 1),
    seed=st.integers(0, 2**16),
)
def test_kernel_matches_reference_on_any_geometry(blocks, block, taps, groups, gs, side, seed):
    y, h, base, proj = rand_case(blocks, block, taps, groups * gs, gs, seed)
    ref = grouped_dynamic_conv(y, h, base, proj, side, block)
    torch.testing.assert_close(
        triton_grouped_dynamic_conv(y, h, base, proj, side, block), ref, rtol=1e-5, atol=1e-5
    )
