"""The accept card table and page carry the run's verdict: a τ that failed (DF751) says FAILED where it is shown."""

from __future__ import annotations

from dflash2_ckpt.accept.report import AcceptReport, PromptResult
from dflash2_ckpt.accept.stats import Interval
from dflash2_ckpt.findings import Finding
from dflash2_ckpt.report.accept_tables import markdown, page


def _report(tau: float, *findings: Finding) -> AcceptReport:
    p = PromptResult("p0", 12, 32, 10, Interval(tau, tau - 0.2, tau + 0.2, 9), [1] * 10, True, 50.0, 20.0)
    return AcceptReport(
        "org/drafter",
        "org/target",
        "cuda:0 (NVIDIA H200)",
        "sdpa",
        6,
        32,
        "built-in",
        Interval(tau, tau - 0.2, tau + 0.2, 9),
        0.3,
        [0.5, 0.2],
        50.0,
        20.0,
        {"baseline": 32, "speculative": 10, "saved": 22},
        [p],
        findings=list(findings),
    )


def test_a_failing_tau_is_marked_failed_with_its_code() -> None:
    bad = _report(1.4, Finding("DF751", "mean acceptance length 1.40 below 2.6"))
    md = markdown(bad)
    header, _, row = md.splitlines()[:3]
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert header.rstrip(" |").endswith("verdict") and cells[-1] == "**FAILED (DF751)**"
    assert "PASSED" not in md and "cuda:0 (NVIDIA H200)" in md
    assert "Verdict: FAILED (DF751)" in page(bad)


def test_a_passing_tau_is_marked_passed() -> None:
    good = _report(3.2, Finding("DF753", "few steps"))  # an info finding does not fail it
    assert markdown(good).splitlines()[2].endswith("| **PASSED** |")
    assert "Verdict: PASSED" in page(good) and "FAILED" not in page(good)
