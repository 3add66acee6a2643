"""Fuzz the quantization_config pattern matcher (issue 22 item 1): whatever regex a config carries and
whatever module name it meets, matching ends quickly, and when it is evaluated it agrees with Python's
re.match (compressed-tensors' own matcher) on every name re finishes on in time."""

from __future__ import annotations

import re
import signal
import time
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dflash2_ckpt.quant.config import QuantConfigError, ct_match, parse_quant_config
from dflash2_ckpt.quant.match import compile_pattern

ATOMS = [
    "a",
    "l",
    ".",
    "\\.",
    "[a-z_.0-9]",
    "\\d",
    "(?=l)",
    "(?!fc)",
    "(l)",
    "\\1",
    "|",
    "*",
    "+",
    "?",
    "{2}",
    "(",
    ")",
    "(?:",
    "^",
    "$",
    ".*",
    "layers",
    "mlp",
    "_proj",
    "!",
]
NAMES = st.one_of(
    st.sampled_from(
        [
            "fc",
            "layers.0.mlp.up_proj",
            "layers.1.self_attn.q_proj",
            "lm_head",
            "candidate_selector.hidden_projection",
        ]
    ),
    st.text(alphabet="al._0123456789", min_size=0, max_size=60),
)


class Slow(Exception):
    pass


def _re_match(pattern: str, name: str) -> bool | None:
    """Python's answer, or None when it takes more than 0.2 s (the backtracking the matcher avoids)."""

    def fire(signum: int, frame: Any) -> None:
        raise Slow()

    old = signal.signal(signal.SIGALRM, fire)
    signal.setitimer(signal.ITIMER_REAL, 0.2)
    try:
        return re.match(pattern, name) is not None
    except Slow:
        return None
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


@given(atoms=st.lists(st.sampled_from(ATOMS), min_size=1, max_size=12), name=NAMES)
@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_matching_is_bounded_and_agrees_with_re(atoms: list[str], name: str) -> None:
    pattern = "".join(atoms)
    try:
        re.compile(pattern)
    except (re.error, RecursionError, OverflowError):
        return  # the config parser refuses these (DF229)
    t0 = time.monotonic()
    m = compile_pattern(pattern)
    got = m.match(name)
    assert time.monotonic() - t0 < 1.0, pattern
    if got is not None:
        want = _re_match(pattern, name)
        if want is not None:
            assert got == want, (pattern, name)
    assert ct_match(name, "Linear", "re:" + pattern) is bool(got)


@given(
    ignore=st.lists(st.builds("".join, st.lists(st.sampled_from(ATOMS), min_size=1, max_size=8)), max_size=6)
)
@settings(max_examples=100, deadline=None)
def test_any_ignore_list_parses_or_is_a_config_error(ignore: list[str]) -> None:
    q = {
        "quant_method": "compressed-tensors",
        "format": "pack-quantized",
        "ignore": ["re:" + x for x in ignore],
        "config_groups": {
            "g": {"targets": ["Linear"], "weights": {"num_bits": 4, "group_size": 16, "strategy": "group"}}
        },
    }
    try:
        cfg = parse_quant_config({"quantization_config": q})
    except QuantConfigError:
        return
    assert cfg is not None
    t0 = time.monotonic()
    for mod in ("fc", "layers.0.mlp.up_proj", "a" * 5000 + "!"):
        cfg.scheme_for(mod, "Linear")
    assert time.monotonic() - t0 < 2.0
    assert set(cfg.skipped) <= {"re:" + x for x in ignore}


def test_the_known_bombs_are_linear() -> None:
    for pattern, name in [
        ("(a+)+$", "a" * 50_000 + "b"),
        ("([a-z_.0-9]|[a-z_.0-9]|[a-z_.0-9])*!", "layers.0." * 5000),
    ]:
        t0 = time.monotonic()
        assert compile_pattern(pattern).match(name) is False
        assert time.monotonic() - t0 < 0.5


@pytest.mark.parametrize("pattern", ["(?=l)(a|a)*!", "(l)(\\1|l)*!", "(?!x)(a+)+$"])
def test_nested_repetition_re2_cannot_run_is_not_evaluated(pattern: str) -> None:
    m = compile_pattern(pattern)
    assert m.run is None and "exponential" in m.why
    assert m.match("l" * 40 + "x") is None
