"""The audit table renderers: Markdown content, and the HTML page driven in a real headless Chromium."""

from __future__ import annotations

import shutil

import pytest

from dflash2_ckpt.audit.rows import Row
from dflash2_ckpt.audit.run import AuditResult
from dflash2_ckpt.report.audit import to_html, to_markdown


def _engine(name: str, versions: str, verdict: str) -> dict[str, object]:
    return {
        "engine": name,
        "versions": versions,
        "verdict": verdict,
        "reasons": [{"code": "DF801", "severity": "error", "message": f"{name} says <{verdict}>"}],
        "serve": None,
    }


def _result() -> AuditResult:
    rows = (
        Row(
            input="a/zeta",
            repo="a/zeta",
            revision="f" * 40,
            dialect="nested",
            version="v2",
            counts={"error": 0, "warning": 1, "info": 0},
            engines=(_engine("vllm", ">=0.29", "loads"), _engine("sglang", ">=0.5.19", "degraded")),
        ),
        Row(
            input="b/alpha",
            repo="b/alpha",
            revision="a" * 40,
            dialect="flat",
            version="v2",
            counts={"error": 2, "warning": 0, "info": 0},
            findings=(
                {"code": "DF201", "severity": "error", "message": "missing <fc.weight>"},
                {"code": "DF106", "severity": "error", "message": "set `mask_token_id` below `vocab_size`"},
                {
                    "code": "DF116",
                    "severity": "info",
                    "message": "**kept** as *is*, _see_ [the codes](https://"
                    "example.org/codes#df116) or https://example.org/x_y. [no](javascript:alert(1)) 2*3*4 "
                    "snake_case __init__",
                },
            ),
            engines=(_engine("vllm", ">=0.29", "fails"), _engine("sglang", ">=0.5.19", "loads")),
        ),
        Row(
            input="c/gone",
            repo="c/gone",
            error={
                "type": "RepositoryNotFoundError",
                "message": "repo c/gone not found",
                "hint": "check the spelling",
            },
        ),
    )
    return AuditResult(rows, engines=())


def test_markdown_has_one_row_per_drafter_and_a_column_per_engine() -> None:
    md = to_markdown(_result())
    lines = md.splitlines()
    assert lines[0].startswith(
        "| drafter | revision | dialect | version | target | findings | vllm >=0.29 | sglang >=0.5.19 |"
    )
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


def test_html_marks_verify_errors_has_a_legend_and_no_raw_markdown() -> None:
    import re

    page = to_html(_result())
    rows = re.findall(r"<tr data-verdicts.*?</tr>", page, re.S)
    flagged = [len(re.findall(r'class="[^"]*verify-errors', r)) for r in rows]
    assert flagged == [0, 2, 0]  # b/alpha has 2 verify errors: both its verdict cells say so
    assert 'title="verify found 2 error(s)"' in rows[1]
    assert 'id="legend"' in page and all(
        f'<span class="{v}">{v}</span>' in page for v in ("loads", "degraded", "fails", "needs-conversion")
    )
    body = page[page.index("<body>") : page.index("<script>")]
    assert "`" not in body and "<code>mask_token_id</code>" in body
    # emphasis, links and bare addresses render; a javascript: link stays text; snake_case and 2*3*4 stay
    assert "<strong>kept</strong> as <em>is</em>, <em>see</em>" in body
    assert '<a href="https://example.org/codes#df116" rel="noopener noreferrer">the codes</a>' in body
    assert '<a href="https://example.org/x_y" rel="noopener noreferrer">https://example.org/x_y</a>.' in body
    assert "no (javascript:alert(1))" in body and 'href="javascript' not in body
    assert "2*3*4 snake_case __init__" in body
    assert "**" not in body and "](" not in body
    assert "position:sticky" in page


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
        return page.eval_on_selector_all(
            "#audit tbody tr:not(.hidden) td:first-child", "els => els.map(e => e.textContent)"
        )

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

    # the findings list follows the filter: only the shown drafters' details stay
    def details() -> list[str]:
        return page.eval_on_selector_all(
            "details:not(.hidden) summary code", "els => els.map(e => e.textContent)"
        )

    page.fill("#text", "alpha")
    assert drafters() == ["b/alpha"] and details() == ["b/alpha"]
    page.fill("#text", "")
    assert sorted(details()) == ["a/zeta", "b/alpha", "c/gone"]

    # no raw markdown where people read: the findings as the browser shows them
    page.click("#row-1 summary")
    shown = page.inner_text("#row-1")
    assert "set mask_token_id below vocab_size" in shown and "kept as is, see the codes or" in shown
    assert not any(mark in shown for mark in ("`", "**", "](", "*is*", "_see_"))
    assert (
        page.eval_on_selector("#row-1 a[href^='https://example.org/codes']", "a => a.textContent")
        == "the codes"
    )

    # sticky header and first column: still in view after scrolling the table both ways
    page.set_viewport_size({"width": 420, "height": 300})
    page.eval_on_selector(
        ".wrap",
        "w => { w.style.maxHeight = '120px'; w.scrollIntoView(); w.scrollTop = 60; w.scrollLeft = 200; }",
    )
    wrap = page.eval_on_selector(".wrap", "w => w.getBoundingClientRect().top")
    head = page.eval_on_selector("#audit thead th:nth-child(2)", "e => e.getBoundingClientRect().top")
    left = page.eval_on_selector(".wrap", "w => w.getBoundingClientRect().left")
    first = page.eval_on_selector("#audit tbody tr td:first-child", "e => e.getBoundingClientRect().left")
    assert abs(head - wrap) < 2 and abs(first - left) < 2, (head, wrap, first, left)
    shot = page.locator(".wrap").screenshot(path=str(tmp_path / "audit.png"))  # the scrolled table
    assert shot[:8] == b"\x89PNG\r\n\x1a\n" and len(shot) > 2000
    # the legend's verify-errors swatch and the flagged cells render in red (the screenshot's colours)
    outline = page.eval_on_selector("td.verify-errors", "e => getComputedStyle(e).outlineColor")
    assert outline == "rgb(187, 0, 0)"
    assert errors == []


def test_html_groups_each_engines_releases_under_one_header() -> None:
    import re

    page = to_html(_result())
    head = page[page.index("<thead>") : page.index("</thead>")]
    groups = re.findall(r'<th class="group" colspan="(\d+)">([^<]*)</th>', head)
    assert [g for _, g in groups] == ["vllm", "sglang"] and all(n == "1" for n, _ in groups)
    sortable = [int(n) for n in re.findall(r'data-col="(\d+)"', head)]
    assert sortable == list(range(len(sortable))) and len(sortable) == 7 + 2  # every column sorts
    rows = re.findall(r"<tr data-verdicts.*?</tr>", page, re.S)
    assert len(re.findall(r"<td", rows[0])) == len(sortable)  # a cell under each header
    assert "thead{position:sticky" in page and "td:first-child" in page  # header and drafter stay in view
