"""Re-run vLLM on every drafter of the golden table (fixtures/vllm/golden.json), in one probe, and check it
still does what the record says: the same outcome, in the same words."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from dflash2_ckpt.engines.runners import vllm_runner as runner

from . import golden

DOC = json.loads(golden.GOLDEN.read_text()) if golden.GOLDEN.is_file() else {"rows": []}
ROWS = DOC["rows"]


@pytest.fixture(scope="module")
def probed(vllm_python: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    req = golden.request(tmp_path_factory.mktemp("vllm-cases"))
    got = runner.probe(vllm_python, req["cases"])
    assert got["vllm"] == DOC["vllm"], f"the record is of vLLM {DOC['vllm']}, this is {got['vllm']}"
    return {c.name: golden.outcome(c, r) for c, r in zip(golden.CASES, got["results"])}


@pytest.mark.parametrize("row", ROWS, ids=lambda r: r["case"])
def test_vllm_still_does_what_the_record_says(row: dict[str, Any], probed: dict[str, Any]) -> None:
    got = probed[row["case"]]
    assert {k: got.get(k) for k in ("engine", "config", "load")} == {
        k: row.get(k) for k in ("engine", "config", "load")
    }
