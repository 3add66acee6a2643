"""compat's `vllm@0.32.0` verdict against what vLLM 0.32.0's own config check and loader did, row by row
(fixtures/vllm/golden.json, recorded by tests/vllm_engine/golden.py; tests/vllm_engine re-runs vLLM when
it is installed). No vLLM here: compat judges the same drafters and must give the recorded verdict and
codes, and the recorded verdict must agree with the engine (golden.agrees)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from vllm_engine import golden  # tests/vllm_engine (tests/ is on the path: pyproject `pythonpath`)

ROWS = json.loads(golden.GOLDEN.read_text())["rows"] if golden.GOLDEN.is_file() else []


def test_the_record_is_whole_and_large_enough() -> None:
    assert [r["case"] for r in ROWS] == [c.name for c in golden.CASES]
    assert len(ROWS) >= 12
    # every outcome class the table distinguishes is present, so each branch of the agreement is exercised
    assert {"loads", "runner", "fails", "silent", "cpu-kernel"} <= {r["engine"] for r in ROWS}


@pytest.mark.parametrize("case", golden.CASES, ids=lambda c: c.name)
def test_compat_gives_the_recorded_verdict(case: golden.Case, tmp_path: Path) -> None:
    [row] = [r for r in ROWS if r["case"] == case.name]
    assert golden.compat_verdict(case.path(tmp_path)) == (row["compat"], row["codes"])


@pytest.mark.parametrize("row", ROWS, ids=lambda r: r["case"])
def test_recorded_compat_agrees_with_vllm(row: dict) -> None:
    assert golden.agrees(row["compat"], row["engine"]), row
