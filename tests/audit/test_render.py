"""The audit table renderers: Markdown content, and the HTML page driven in a real headless Chromium."""
from __future__ import annotations

import shutil

import pytest

from dflash2_ckpt.report.audit import to_html, to_markdown
from dflash2_ckpt.audit.rows import Row
from dflash2_ckpt.audit.run import AuditResult


def _engine(name: str, versions: str, verdict: str) -> dict[str, object]:
    return {"engine": name, "versions": versions, "verdict": verdict,
            "reasons": [{"code": "DF801", "severity": "error", "message": f"{name} says <{verdict}>"}], "serve": None}


def _result() -> AuditResult:
    rows = (
        Row(input="a/zeta", repo="a/zeta", revision="f" * 40, dialect="nested", version="v2",
            counts={"error": 0, "warning": 1, "info": 0},
            engines=(_engine("vllm", ">=0.29", "loads"), _engine("sglang", ">=0.5.19", "degraded"))),
        Row(input="b/alpha", repo="b/alpha", revision="a" * 40, dialect="flat", version="v2",
            counts={"error": 2, "warning": 0, "info": 0},
            findings=({"code": "DF201", "severity": "error", "message": "missing <fc.weight>"},),
            engines=(_engine("vllm", ">=0.29", "fails"), _engine("sglang", ">=0.5.19", "loads"))),
        Row(input="c/gone", repo="c/gone", error={"type": "RepositoryNotFoundError", "message": "repo c/gone not found",
                                                 "hint": "check the spelling"}),
    )
    return AuditResult(rows, engines=())


def test_markdown_has_one_row_per_drafter_and_a_column_per_engine() -> None:
    md = to_markdown(_result())
    lines = md.splitlines()
    assert lines[0].startswith("| drafter | revision | dialect | version | target | findings | vllm >=0.29 | sglang >=0.5.19 |")
    body = [ln for ln in lines[2:] if ln.startswith("|")]
    assert [ln.split("|")[1].strip() for ln in body] == ["a/zeta", "b/alpha", "c/gone"]
    assert "✅ loads" in body[0] and "⚠️ degraded" in body[0] and "❌ fails" in body[1]
    assert "unreadable: repo c/gone not found" in body[2]
    # a/zeta: no error finding and one engine loads it (no engine named); b/alpha has errors
    assert "1/3 drafters load cleanly; 1 unreadable" in md
    assert "vllm >=0.29: 1/3" in md


def test_html_escapes_everything_it_is_given() -> None:
    page = to_html(_result())
    assert "<fc.weight>" not in page and "&lt;fc.weight&gt;" in page
    assert "&lt;degraded&gt;" in page


@pytest.fixture(scope="module")
def browser():  # type: ignore[no-untyped-def]
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        pytest.skip("Chromium is not installed (apt-get install chromium; .ci/run installs it)")
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
        yield b
        b.close()


def test_html_sorts_and_filters_in_a_real_browser(browser, tmp_path) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "audit.html"
    path.write_text(to_html(_result()), encoding="utf-8")
    page = browser.new_page()
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(path.as_uri())

    def drafters() -> list[str]:
        return page.eval_on_selector_all("#audit tbody tr:not(.hidden) td:first-child", "els => els.map(e => e.textContent)")

    assert drafters() == ["a/zeta", "b/alpha", "c/gone"]
    # ascending by drafter name, then descending
    page.click("#audit th:nth-child(1)")
    assert drafters() == sorted(["a/zeta", "b/alpha", "c/gone"])
    page.click("#audit th:nth-child(1)")
    assert drafters() == sorted(["a/zeta", "b/alpha", "c/gone"], reverse=True)
    # the errors column sorts numerically, unreadable first
    page.click("#audit th:nth-child(6)")
    assert drafters() == ["c/gone", "a/zeta", "b/alpha"]

    page.select_option("#engine", "vllm >=0.29")
    page.select_option("#verdict", "fails")
    assert drafters() == ["b/alpha"]
    assert page.text_content("#shown") == "1 of 3 shown"
    page.select_option("#engine", "")
    page.select_option("#verdict", "loads")
    assert sorted(drafters()) == ["a/zeta", "b/alpha"]
    page.fill("#text", "zeta")
    assert drafters() == ["a/zeta"]

    # each verdict cell links to its findings
    page.fill("#text", "")
    page.select_option("#verdict", "")
    href = page.get_attribute("#audit tbody tr td.degraded a", "href")
    assert href is not None and page.locator(href).count() == 1
    assert "sglang says" in (page.text_content(href) or "")
    assert errors == []
