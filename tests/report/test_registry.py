"""A new report kind plugs in as a Verdict with subject, findings and to_json(): every format renders it."""

from __future__ import annotations

import io
import json
from dataclasses import dataclass

import pytest

from dflash2_ckpt.findings import Finding, Verdict
from dflash2_ckpt.report import FORMATS, render
from dflash2_ckpt.report.text import text_renderer


@dataclass
class AuditReport(Verdict):
    subject: str
    findings: tuple[Finding, ...]
    kind = "audit-test"

    def to_json(self) -> dict:
        return {"subject": self.subject, "findings": [f.to_json() for f in self.findings]}


REPORT = AuditReport("somewhere", (Finding("DF201", "a [tensor] is missing", tensor="x.weight"),))


@pytest.mark.parametrize("fmt", sorted(FORMATS))
def test_a_new_kind_renders_in_every_format(fmt: str) -> None:
    out = io.StringIO()
    render(REPORT, fmt, out)
    text = out.getvalue()
    assert "DF201" in text and "a [tensor] is missing" in text
    if fmt in ("json", "sarif"):
        json.loads(text)


class LaidOutReport(AuditReport):
    kind = "audit-test-laid-out"


def test_a_kind_may_register_its_own_text_layout() -> None:
    @text_renderer(LaidOutReport.kind)
    def layout(report: AuditReport, console) -> None:  # noqa: ANN001
        console.print(f"audited {report.subject}", markup=False)

    out = io.StringIO()
    render(LaidOutReport(REPORT.subject, REPORT.findings), "text", out)
    assert out.getvalue() == "audited somewhere\n"
