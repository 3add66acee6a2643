"""The smoke forward stood in for (no torch): a SmokeReport as run_smoke returns one, and a smoke package
whose run_smoke records what it was given."""

from __future__ import annotations

import sys
import types
from typing import Any

import pytest

from dflash2_ckpt.findings import Finding
from dflash2_ckpt.smoke.report import SmokeReport


def smoke_report(*findings: Finding, checkpoint: str = "drafter") -> SmokeReport:
    return SmokeReport(
        checkpoint,
        "v2",
        "cpu",
        "interpret",
        {"embed_tokens": "random", "lm_head": "random"},
        findings=list(findings),
    )


def stand_in_smoke(monkeypatch: pytest.MonkeyPatch, *findings: Finding) -> dict[str, Any]:
    """Replace dflash2_ckpt.smoke for this test; returns what run_smoke was last called with (source, target)."""
    seen: dict[str, Any] = {}

    def run_smoke(source: Any, target: Any = None) -> SmokeReport:
        seen.update(source=source, target=target)
        return smoke_report(*findings)

    fake = types.ModuleType("dflash2_ckpt.smoke")
    fake.run_smoke = run_smoke  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "dflash2_ckpt.smoke", fake)
    return seen
