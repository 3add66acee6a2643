"""The accept judgements (DF75x) and the --expect syntax."""

from __future__ import annotations

import pytest

from dflash2_ckpt.accept import checks
from dflash2_ckpt.codes import REGISTRY
from dflash2_ckpt.errors import ConfigError


def test_codes_are_registered_and_claimed():
    assert {"DF750", "DF751", "DF752", "DF753", "DF754", "DF755"} == checks.EMITS
    assert all(c in REGISTRY for c in checks.EMITS)


@pytest.mark.parametrize(
    "text,want",
    [
        ("4.8±0.3", (4.8, 0.3)),
        ("4.8+-0.3", (4.8, 0.3)),
        ("4.8 +/- 0.3", (4.8, 0.3)),
        ("5+-10%", (5.0, 0.5)),
        ("4", (4.0, 0.2)),
        (3.0, (3.0, 0.15)),
        ((2.0, 0.1), (2.0, 0.1)),
        (None, None),
    ],
)
def test_parse_expect(text, want):
    got = checks.parse_expect(text)
    assert got == want if want is None else got == pytest.approx(want)


@pytest.mark.parametrize("bad", ["", "fast", "4.8±", "±0.3", "4.8 0.3", "-1"])
def test_parse_expect_rejects(bad):
    with pytest.raises(ConfigError, match="TAU"):
        checks.parse_expect(bad)


def test_lossless_names_the_first_differing_token():
    assert checks.lossless("p", [1, 2, 3], [1, 2, 3]) == []
    (f,) = checks.lossless("p", [1, 2, 3], [1, 9, 3])
    assert f.code == "DF750" and f.details["index"] == 1 and f.severity == "error"
    (f,) = checks.lossless("p", [1, 2, 3], [1, 2])
    assert f.details["index"] == 2


def test_a_near_tie_is_rounding_not_a_loop_error():
    (f,) = checks.lossless("p", [1, 2, 3], [1, 9, 3], gap=1e-4, tolerance=1e-3)
    assert f.code == "DF754" and f.severity == "warning" and f.details["index"] == 1
    (f,) = checks.lossless("p", [1, 2, 3], [1, 9, 3], gap=0.3, tolerance=1e-3)
    assert f.code == "DF750" and f.details["gap"] == 0.3


def test_not_drafting_threshold_and_causes_in_order():
    assert checks.drafting(2.6, 8) == []
    (f,) = checks.drafting(2.39, 8)
    assert f.code == "DF751" and "first 32 new tokens" in f.message and "tau" not in f.details
    (f,) = checks.drafting(1.2, 8, tau=1.1)
    assert f.details["tau_opening"] == 1.2 and f.details["tau"] == 1.1 and "whole output 1.10" in f.message
    msg = f.message
    assert msg.index("fc") < msg.index("v2 weights read as v1") < msg.index("tap") < msg.index("causality")


def test_judged_names_the_opening_it_judged():
    (f,) = checks.judged(1.2, 1.2, 8, 16, None)  # a 16-token run is its own opening
    assert "first 16 new tokens" in f.message and "whole output" not in f.message
    (f,) = checks.judged(1.2, 2.9, 8, 256, None)
    assert "first 32 new tokens" in f.message and f.details["tau"] == 2.9
    assert checks.judged(6.1, 2.4, 8, 256, None) == []  # a long output's lower τ is no DF751
    assert [f.code for f in checks.judged(6.1, 2.4, 8, 256, (6.0, 0.3))] == ["DF752"]


def test_the_opening_is_the_steps_a_short_run_makes():
    # committed before each step: 1 (the prefill's token), 1 + 8 = 9, 9 + 1 = 10, 10 + 4 = 14
    assert checks.opening([7, 0, 3, 7, 7], 10) == [7, 0]
    assert checks.opening([7, 0, 3, 7, 7], 11) == [7, 0, 3]
    assert checks.opening([7, 0, 3], 64) == [7, 0, 3]
    assert checks.opening([], 32) == [] and checks.opening([5], 1) == []
    assert checks.opening_tau([[7, 0, 3, 7], [1, 1]], 10).mean == (8 + 1 + 2 + 2) / 4


def test_expected_tolerance_is_inclusive():
    assert checks.expected(4.5, (4.8, 0.3)) == []
    assert checks.expected(4.49, (4.8, 0.3))[0].code == "DF752"
    assert checks.expected(1.0, None) == []


def test_caveats():
    codes = [f.code for f in checks.caveats([0, 3], 4, 100)]
    assert codes == ["DF753"]
    assert [f.details for f in checks.caveats([0, 2], 4, 5)] == [{"steps": 5}]
    assert checks.caveats([0, 2], 4, 100) == []


from hypothesis import given  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

figures = st.floats(min_value=0, max_value=64, allow_nan=False).map(lambda x: round(x, 3))


@given(figures, figures, st.sampled_from(["±", "+-", " +/- "]))
def test_parse_expect_round_trips(tau, tol, sep):
    assert checks.parse_expect(f"{tau}{sep}{tol}") == pytest.approx((tau, tol))
    assert checks.parse_expect(f"{tau}") == pytest.approx((tau, tau * checks.DEFAULT_REL_TOL))


@given(st.text(max_size=12))
def test_parse_expect_never_crashes(text):
    try:
        got = checks.parse_expect(text)
    except ConfigError:
        return
    assert got is not None and got[0] >= 0 and got[1] >= 0


def test_importing_the_package_and_command_loads_no_torch():
    import subprocess
    import sys
    from pathlib import Path

    code = (
        "import sys; import dflash2_ckpt, dflash2_ckpt.cli.accept; from dflash2_ckpt.accept import report, stats; "
        "assert callable(dflash2_ckpt.accept); print('torch' in sys.modules, 'transformers' in sys.modules)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        cwd=Path(__file__).resolve().parents[2],
        capture_output=True,
        text=True,
        check=True,
    )
    assert out.stdout.strip() == "False False"


def test_engine_parity_floor():
    assert checks.parity("llama.cpp", 7.9, 8.0) == []
    (f,) = checks.parity("llama.cpp", 3.0, 8.0)
    assert f.code == "DF755" and f.details["ratio"] == 0.375 and f.details["floor"] == checks.PARITY_FLOOR


def test_committed_tau_counts_the_reference_as_an_engine_does():
    # two prompts of 33 generated tokens (32 committed after the prefill's), 4 and 5 steps: the cropped
    # last step counts what it committed, not a whole block
    assert checks.committed_tau([33, 33], [4, 5]) == 64 / 9
    assert checks.committed_tau([], []) == 0.0
    assert checks.committed_tau([1], [0]) == 0.0
