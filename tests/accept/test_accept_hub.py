"""accept with the drafter and the target given as Hub repos (the fake Hub, the real client)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")

from _kit.cli import invoke_cli  # noqa: E402
from _kit.fakehub import FakeHub  # noqa: E402

PAIR = Path(__file__).resolve().parents[2] / "fixtures" / "pairs" / "tiny"


@pytest.mark.skipif(not (PAIR / "drafter" / "model.safetensors").is_file(), reason="tiny pair not built")
def test_accept_reads_drafter_and_target_from_the_hub(hub: FakeHub) -> None:
    from dflash2_ckpt.cli.accept import accept_command

    hub.add_commit("org/tiny-drafter", PAIR / "drafter")
    hub.add_commit("org/tiny-target", PAIR / "target")
    res = invoke_cli(
        accept_command,
        [
            "org/tiny-drafter",
            "--target",
            "org/tiny-target",
            "--max-new-tokens",
            "16",
            "--limit",
            "2",
            "--device",
            "cpu",
            "--format",
            "json",
        ],
    )
    doc = json.loads(res.stdout)
    assert res.exit_code == 0, res.output
    assert doc["drafter"].startswith("org/tiny-drafter") and doc["target"] == "org/tiny-target"
    assert doc["prompts_source"] == "target's prompts.jsonl" and doc["tau"]["mean"] >= 2.0
    assert all(p["lossless"] for p in doc["prompts"])
    res = invoke_cli(accept_command, ["org/tiny-drafter", "--target", "org/missing", "--format", "json"])
    err = json.loads(res.stdout)["error"]
    assert (
        res.exit_code == 3
        and err["type"] == "RepositoryNotFoundError"
        and err.get("repo_id") == "org/missing"
    )
