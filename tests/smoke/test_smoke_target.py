"""`verify --smoke --target org/name`: the target repo is opened once and that Source goes to the smoke."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from _kit.cli import run_output as run
from _kit.fakehub import FakeHub

pytest.importorskip("torch")
pytest.importorskip("triton")  # interpreted on a CPU: tests/conftest.py chose the mode


def test_smoke_with_a_hub_target_runs(
    hub: FakeHub, ckpts: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    if "nested-v2" not in ckpts:
        pytest.skip("fixtures/good not built")
    root = Path(__file__).resolve().parents[2] / "fixtures" / "targets" / "tiny-target"
    hub.add_commit("org/target", root)
    code, out = run(
        "verify", str(ckpts["nested-v2"]), "--smoke", "--target", "org/target", "--format", "json"
    )
    doc = json.loads(out)
    assert code == 0, out
    assert doc["smoke"]["passed"] is True and doc["smoke"]["embedding_source"]["embed_tokens"] != "target"
