"""audit under --format sarif / github: each result sits in its own drafter (repo id, then file), an
unreadable drafter is an error result, and the closing verdict agrees with the exit code."""

from __future__ import annotations

import json
from pathlib import Path

from _kit.cli import invoke_cli
from _kit.fakehub import FakeHub
from dflash2_ckpt.cli import main

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"


def audit(*args: str):
    return invoke_cli(main, ["audit", *args])


def test_sarif_places_results_in_their_drafters_and_reports_the_unreadable(
    hub: FakeHub, tmp_path: Path
) -> None:
    hub.add_commit("org/good", FIXTURES / "good" / "nested-v2")
    hub.add_commit("org/taps", FIXTURES / "broken" / "tap-ids-off-by-one")
    hub.add_commit("org/dup", FIXTURES / "broken" / "block-size-conflict")
    cache = ["--cache", str(tmp_path / "cache")]
    r = audit("org/good", "org/taps", "org/dup", "org/missing", "--format", "sarif", *cache)
    assert r.exit_code == 1
    run = json.loads(r.stdout)["runs"][0]
    where = {
        (x["ruleId"], x["locations"][0]["physicalLocation"]["artifactLocation"]["uri"])
        for x in run["results"]
    }
    assert ("DF107", "org/taps/config.json") in where
    assert ("DF112", "org/dup/config.json") in where
    assert not any(uri == "config.json" for _, uri in where)
    [missing] = [x for x in run["results"] if x["ruleId"] == "DF613"]
    assert missing["level"] == "error" and "org/missing" in missing["message"]["text"]
    inv = run["invocations"][0]
    assert inv["exitCode"] == 1 and inv["executionSuccessful"] is False
    assert "org/missing" in inv["toolExecutionNotifications"][0]["message"]["text"]


def test_github_closing_line_agrees_with_the_exit_code(hub: FakeHub, tmp_path: Path) -> None:
    hub.add_commit("org/good", FIXTURES / "good" / "nested-v2")
    cache = ["--cache", str(tmp_path / "cache")]
    # no error finding, but the engine asked for does not load it (it reads GGUF): exit 1, so not "passed"
    r = audit("org/good", "--engine", "llama.cpp", "--format", "github", *cache)
    assert r.exit_code == 1
    assert "FAILED" in r.stdout.splitlines()[-1]
    r = audit("org/good", "--engine", "vllm", "--format", "github", *cache)
    assert r.exit_code == 0 and "passed" in r.stdout.splitlines()[-1]
    r = audit("org/good", "org/missing", "--format", "github", *cache)
    assert r.exit_code == 1 and any(
        x.startswith("::error") and "org/missing" in x for x in r.stdout.splitlines()
    )
    assert "FAILED" in r.stdout.splitlines()[-1]
