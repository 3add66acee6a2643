"""accept's per-position chart where people look: the SVG of the html page and the markdown card drawn by
a real headless Chromium (one bar per draft position, its height the acceptance rate), the terminal bars,
and the progress bar a long run shows on a terminal. No torch: the report is built directly."""

from __future__ import annotations

import io
import re
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from dflash2_ckpt.accept.report import AcceptReport, PromptResult
from dflash2_ckpt.accept.stats import Interval
from dflash2_ckpt.report.accept_tables import HEIGHT, markdown, page
from dflash2_ckpt.report.text_accept import accept_lines

RATES = [0.9, 0.6, 0.25, 0.0, 1.0]


def _report() -> AcceptReport:
    p = PromptResult("p0", 12, 32, 10, Interval(3.2, 2.9, 3.5, 9), [3] * 10, True, 50.0, 20.0)
    return AcceptReport(
        "org/drafter",
        "org/target",
        "cpu",
        "sdpa",
        6,
        32,
        "built-in",
        Interval(3.2, 2.9, 3.5, 9),
        0.55,
        list(RATES),
        50.0,
        20.0,
        {"baseline": 32, "speculative": 10, "saved": 22},
        [p],
    )


def test_terminal_bars_follow_the_rates() -> None:
    bars = [ln for ln in accept_lines(_report()) if ln.startswith("    draft ")]
    assert [ln.count("█") for ln in bars] == [round(r * 40) for r in RATES]
    assert bars[0].endswith(" 0.90") and bars[3].endswith(" 0.00")


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        pytest.skip("Chromium is not installed (apt-get install chromium; .ci/run installs it)")
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
        yield b
        b.close()


def test_the_chart_draws_in_a_real_browser(browser: Any, tmp_path: Path) -> None:
    html_page = tmp_path / "accept.html"
    html_page.write_text(page(_report()), encoding="utf-8")
    # the markdown card as GitHub / the Hub show it: the <img> with the SVG as a data URI
    card = tmp_path / "card.html"
    card.write_text(
        "<!doctype html><meta charset='utf-8'><body>" + markdown(_report()) + "</body>", encoding="utf-8"
    )
    tab = browser.new_page()
    errors: list[str] = []
    tab.on("pageerror", lambda e: errors.append(str(e)))
    tab.goto(html_page.as_uri())
    heights = tab.eval_on_selector_all(
        "figure svg rect", "rs => rs.map(r => r.getBoundingClientRect().height)"
    )
    assert [round(h, 1) for h in heights] == [round(r * HEIGHT, 1) for r in RATES]
    bottoms = tab.eval_on_selector_all(
        "figure svg rect", "rs => rs.map(r => r.getBoundingClientRect().bottom)"
    )
    assert max(bottoms) - min(b for b, h in zip(bottoms, heights) if h) < 0.5  # bars stand on one axis
    shot = tab.locator("figure svg").screenshot(path=str(tmp_path / "chart.png"))
    assert shot[:8] == b"\x89PNG\r\n\x1a\n"
    tab.goto(card.as_uri())
    size = tab.eval_on_selector("img", "i => [i.complete, i.naturalWidth, i.naturalHeight]")
    assert size[0] and size[1] > 0 and size[2] == HEIGHT + 16, size  # the data URI decodes as an image
    assert errors == []


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_long_run_shows_a_progress_bar_on_a_terminal_only(monkeypatch: pytest.MonkeyPatch) -> None:
    from dflash2_ckpt.cli.accept import _progress

    term = _Terminal()
    monkeypatch.setattr(sys, "stderr", term)
    with _progress() as progress:
        progress(0, 2, "prompt 1", None, None)
        progress(1, 2, "prompt 1", 4.5, 4.5)
        progress(2, 2, "prompt 2", 3.0, 3.75)
    shown = term.getvalue()
    assert "accept:" in shown and "2/2" in shown
    assert "τ 3.75" in shown and "ETA" in shown  # the running τ and the time left on the bar
    assert "[1/2]" not in shown  # the bar, not the log lines
    pipe = io.StringIO()
    monkeypatch.setattr(sys, "stderr", pipe)
    with _progress() as progress:  # pipes and CI logs: a line per prompt, no bar
        progress(0, 2, "prompt 1", None, None)
        progress(1, 2, "prompt 1\x1b[2J", 4.5, 4.5)
        progress(2, 2, "prompt 2", float("nan"), 4.5)
    lines = pipe.getvalue().splitlines()
    assert (
        lines[0] == "accept: 2 prompts" and "\x1b" not in pipe.getvalue()
    )  # a label cannot drive the terminal
    assert re.fullmatch(r"\[1/2\] prompt 1.*: τ 4\.50 \(running 4\.50\), ETA \d+ s", lines[1]), lines
    assert lines[2] == "[2/2] prompt 2: τ - (running 4.50), ETA 0 s"


def test_progress_line_eta_is_the_mean_time_per_prompt_times_the_prompts_left() -> None:
    from dflash2_ckpt.cli.accept import progress_line

    assert (
        progress_line(3, 10, "prompt 3", 4.123, 4.3, 12.0)
        == "[3/10] prompt 3: τ 4.12 (running 4.30), ETA 28 s"
    )
    assert progress_line(1, 100, "p", 2.0, 2.0, 90.0).endswith("ETA 2 h 28 min")
    assert progress_line(2, 4, "p", None, None, 75.0).endswith("τ - (running -), ETA 1 min 15 s")
