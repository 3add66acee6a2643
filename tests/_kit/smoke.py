"""A SmokeReport as run_smoke returns one, for tests that stand in for the smoke forward (no torch)."""
from __future__ import annotations

from dflash2_ckpt.findings import Finding
from dflash2_ckpt.smoke.report import SmokeReport


def smoke_report(*findings: Finding, checkpoint: str = "drafter") -> SmokeReport:
    return SmokeReport(checkpoint, "v2", "cpu", "interpret", {"embed_tokens": "random", "lm_head": "random"},
                       findings=list(findings))
