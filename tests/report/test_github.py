"""`--format github`: one workflow annotation per finding, escaped as the runner expects."""

from __future__ import annotations

import io
import re

from hypothesis import given
from hypothesis import strategies as st

from conftest import FIXTURES
from dflash2_ckpt.report import render
from dflash2_ckpt.report.github import annotation, escape_data, escape_property
from dflash2_ckpt.usecases.verify import verify

LINE = re.compile(
    r"^::(error|warning|notice) file=([^,:]+),(?:line=(\d+),)?title=(DF\d{3}) [a-z0-9-]+::(.*)$"
)


def unescape(s: str) -> str:
    return (
        s.replace("%0D", "\r")
        .replace("%0A", "\n")
        .replace("%3A", ":")
        .replace("%2C", ",")
        .replace("%25", "%")
    )


CONTROL = re.compile("[\x00-\x08\x0a-\x1f\x7f-\x9f\u200b-\u200f\u2028-\u202e\u2066-\u2069\u061c\ufeff]")


@given(st.text())
def test_escaping_round_trips_and_stays_on_one_line(s: str) -> None:
    for esc in (escape_data, escape_property):
        e = esc(s)
        assert "\n" not in e and "\r" not in e and not CONTROL.search(e)
        if not CONTROL.search(s.replace("\n", "").replace("\r", "")):
            assert unescape(e) == s
    assert "," not in escape_property(s) and ":" not in escape_property(s)


def test_one_annotation_per_finding_with_severity() -> None:
    report = verify(FIXTURES / "broken" / "causality-unstated")
    out = io.StringIO()
    render(report, "github", out)
    lines = [m for m in (LINE.match(x) for x in out.getvalue().splitlines()) if m]
    assert len(lines) == len(report.findings) > 0
    level = {"error": "error", "warning": "warning", "info": "notice"}
    for m, f in zip(lines, report.findings):
        assert m.group(1) == level[f.severity] and m.group(4) == f.code and unescape(m.group(5)) == f.message


def test_config_field_gets_a_line() -> None:
    report = verify(FIXTURES / "broken" / "mask-id-out-of-vocab")
    out = io.StringIO()
    render(report, "github", out)
    assert re.search(r"::error file=\S+config.json,line=\d+,title=DF106", out.getvalue())
    assert annotation("notice", "a\nb", file="x,y") == "::notice file=x%2Cy::a%0Ab"
