"""Acceptance statistics: definitions and invariants (pure Python)."""
from __future__ import annotations

import math

from hypothesis import given
from hypothesis import strategies as st

from dflash2_ckpt.accept.stats import acceptance_rate, per_position, pooled_tau, step_tau

B = 8
steps = st.lists(st.integers(min_value=0, max_value=B - 1), min_size=1, max_size=40)


@given(st.lists(steps, min_size=1, max_size=6))
def test_pooled_tau_is_committed_over_steps_and_inside_its_interval(prompts):
    t = pooled_tau(prompts)
    every = [a for p in prompts for a in p]
    assert math.isclose(t.mean, sum(a + 1 for a in every) / len(every))
    assert t.low <= t.mean + 1e-9 and t.mean <= t.high + 1e-9


@given(steps)
def test_vllm_rate_and_per_position_agree_with_tau(accepted):
    tau = step_tau(accepted, B)
    assert 1.0 <= tau.low <= tau.mean <= tau.high <= B
    rate = acceptance_rate(accepted, B - 1)
    assert math.isclose(rate, (tau.mean - 1) / (B - 1))          # vLLM's rate = (tau - 1) / (B - 1)
    pos = per_position(accepted, B - 1)
    assert all(a >= b for a, b in zip(pos, pos[1:]))             # draft j+1 is accepted only after draft j
    assert math.isclose(sum(pos), tau.mean - 1)                  # E[accepted] = sum_j P(accepted >= j)


def test_interval_narrows_with_more_steps():
    few, many = step_tau([0, 7, 3, 5] * 2, B), step_tau([0, 7, 3, 5] * 50, B)
    assert math.isclose(few.mean, many.mean)
    assert many.high - many.low < few.high - few.low


def test_constant_steps_have_no_spread_and_empty_is_nan():
    t = step_tau([3] * 10, B)
    assert t.low == t.mean == t.high == 4.0
    assert math.isnan(step_tau([]).mean)
    assert pooled_tau([[2, 2], [2]]).mean == 3.0
