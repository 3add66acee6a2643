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
    assert math.isclose(rate, (tau.mean - 1) / (B - 1))  # vLLM's rate = (tau - 1) / (B - 1)
    pos = per_position(accepted, B - 1)
    assert all(a >= b for a, b in zip(pos, pos[1:]))  # draft j+1 is accepted only after draft j
    assert math.isclose(sum(pos), tau.mean - 1)  # E[accepted] = sum_j P(accepted >= j)


def test_interval_narrows_with_more_steps():
    few, many = step_tau([0, 7, 3, 5] * 2, B), step_tau([0, 7, 3, 5] * 50, B)
    assert math.isclose(few.mean, many.mean)
    assert many.high - many.low < few.high - few.low


def test_constant_steps_have_no_spread_and_empty_is_nan():
    t = step_tau([3] * 10, B)
    assert t.low == t.mean == t.high == 4.0
    assert math.isnan(step_tau([]).mean)
    assert pooled_tau([[2, 2], [2]]).mean == 3.0


def test_three_prompts_use_the_t_quantile_of_two_degrees_of_freedom():
    """The half-width over k prompts is t(0.975, k - 1) standard errors; for k = 3 that is 4.303 (Student's
    table), not 1.96. The standard error is computed here by hand from the ratio estimator."""
    prompts = [[1, 2, 3], [4, 5], [0, 0, 1, 2]]
    committed = [sum(a + 1 for a in p) for p in prompts]
    steps = [len(p) for p in prompts]
    tau = sum(committed) / sum(steps)
    mean_s = sum(steps) / 3
    se = math.sqrt(sum(((c - tau * s) / mean_s) ** 2 for c, s in zip(committed, steps)) / (3 * 2))
    t = pooled_tau(prompts)
    assert math.isclose(t.high - t.mean, 4.302653 * se, rel_tol=1e-6)
    assert t.to_json()["ci95_method"] == "t, 2 df (prompts as clusters)"


def test_many_samples_approach_the_normal_quantile():
    from dflash2_ckpt.accept.stats import t975

    assert math.isclose(t975(1000), 1.962339, rel_tol=1e-5)  # Student's t, 1000 df
    assert math.isclose(t975(31), 2.039513, rel_tol=1e-5)
