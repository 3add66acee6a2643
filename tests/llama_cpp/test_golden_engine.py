"""Re-run llama.cpp on every variant of the golden table (fixtures/llama_cpp/golden.json) and check that
it still does what the record says: refuses with the recorded message, or loads and drafts at the
recorded τ (greedy on the CPU is deterministic; a small tolerance covers thread scheduling)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from . import golden

ROWS = json.loads(golden.GOLDEN.read_text())["rows"] if golden.GOLDEN.is_file() else []


@pytest.fixture(scope="module")
def prompts() -> list[list[int]]:
    return golden.prompt_ids()


@pytest.mark.parametrize("row", ROWS, ids=lambda r: r["variant"])
def test_engine_still_does_what_the_record_says(row, engine, ggufs, prompts, tmp_path: Path):
    [v] = [v for v in golden.VARIANTS if v.name == row["variant"]]
    path = v.make(ggufs["drafter"], tmp_path / f"{v.name}.gguf", engine)
    got = golden.engine_outcome(engine, ggufs["target"], path, prompts, 32)
    want = row["engine"]
    assert got["loads"] == want["loads"], got
    if want["loads"]:
        assert got["tau"] == pytest.approx(want["tau"], abs=0.25), got
    else:
        # refused while loading, or loaded and then aborted while drafting: the same stage as recorded
        assert ("while loading" in got["error"]) == ("while loading" in want["error"]), got
    assert golden.compat_verdict(path) == (row["compat"], row["codes"])
