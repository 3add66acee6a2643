"""accept's per-position chart where people look: the SVG of the html page and the markdown card drawn by
a real headless Chromium (one bar per draft position, its height the acceptance rate), the terminal bars,
and the progress bar a long run shows on a terminal. No torch: the report is built directly."""
from __future__ import annotations

import io
import shutil
import sys
from pathlib import Path
from typing import Any, Iterator

import pytest

from dflash2_ckpt.accept.report import AcceptReport, PromptResult
from dflash2_ckpt.accept.stats import Interval
from dflash2_ckpt.report.accept_tables import HEIGHT, markdown, page
from dflash2_ckpt.report.text_accept import accept_lines

RATES = [0.9, 0.6, 0.25, 0.0, 1.0]


def _report() -> AcceptReport:
    p = PromptResult("p0", 12, 32, 10, Interval(3.2, 2.9, 3.5, 9), [3] * 10, True, 50.0, 20.0)
    return AcceptReport("org/drafter", "org/target", "cpu", "sdpa", 6, 32, "built-in", Interval(3.2, 2.9, 3.5, 9),
                        0.55, list(RATES), 50.0, 20.0, {"baseline": 32, "speculative": 10, "saved": 22}, [p])


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
    card.write_text("<!doctype html><meta charset='utf-8'><body>" + markdown(_report()) + "</body>", encoding="utf-8")
    tab = browser.new_page()
    errors: list[str] = []
    tab.on("pageerror", lambda e: errors.append(str(e)))
    tab.goto(html_page.as_uri())
    heights = tab.eval_on_selector_all("figure svg rect", "rs => rs.map(r => r.getBoundingClientRect().height)")
    assert [round(h, 1) for h in heights] == [round(r * HEIGHT, 1) for r in RATES]
    bottoms = tab.eval_on_selector_all("figure svg rect", "rs => rs.map(r => r.getBoundingClientRect().bottom)")
    assert max(bottoms) - min(b for b, h in zip(bottoms, heights) if h) < 0.5      # bars stand on one axis
    shot = tab.locator("figure svg").screenshot(path=str(tmp_path / "chart.png"))
    assert shot[:8] == b"\x89PNG\r\n\x1a\n"
    tab.goto(card.as_uri())
    size = tab.eval_on_selector("img", "i => [i.complete, i.naturalWidth, i.naturalHeight]")
    assert size[0] and size[1] > 0 and size[2] == HEIGHT + 16, size            # the data URI decodes as an image
    assert errors == []


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_long_run_shows_a_progress_bar_on_a_terminal_only(monkeypatch: pytest.MonkeyPatch) -> None:
    from dflash2_ckpt.cli.accept import _progress
    term = _Terminal()
    monkeypatch.setattr(sys, "stderr", term)
    with _progress() as progress:
        assert progress is not None
        for done in range(3):
            progress(done, 2, f"prompt {done}")
    shown = term.getvalue()
    assert "accept:" in shown and "2/2" in shown
    pipe = io.StringIO()
    monkeypatch.setattr(sys, "stderr", pipe)
    with _progress() as progress:
        assert progress is None                  # pipes and CI logs get no bar
    assert pipe.getvalue() == ""
