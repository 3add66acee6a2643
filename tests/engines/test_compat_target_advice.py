"""compat's advised `convert --to flat|gguf` command: convert reads --target from a local directory only, so a
target compat was given by Hub id is not pasted into the command; the advice says what TARGET must be and how
to fetch it."""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

from _kit.cli import invoke
from _kit.fakehub import FakeHub
from conftest import FIXTURES

DRAFTER = FIXTURES / "good" / "nested-v1"
TARGET = FIXTURES / "targets" / "tiny-target"


def _advice(*args: str) -> dict[str, dict[str, Any]]:
    """engine -> {"message", "command"} of its DF801 (the command is the first `...` of the message)."""
    r = invoke("compat", str(DRAFTER), *args, "--format", "json")
    doc = json.loads(r.output)
    return {
        f"{e['engine']}{e['versions']}": {"message": x["message"], "command": x["message"].split("`")[1]}
        for e in doc["engines"]
        for x in e["reasons"]
        if x["code"] == "DF801"
    }


def test_a_hub_target_is_not_pasted_into_the_convert_command(hub: FakeHub, tmp_path: Path) -> None:
    hub.add_commit("org/target", TARGET)
    advice = _advice("--target", "org/target")
    flat = advice["speculators>=0.9,<0.10"]
    cmd = flat["command"]
    assert "--target org/target" not in cmd and cmd.endswith("--target TARGET")  # before: --target org/target
    msg = flat["message"]
    assert (
        "must be a local directory" in msg and "hf download org/target config.json --local-dir TARGET" in msg
    )
    assert "--verifier-name org/target --verifier-arch CLASS" in msg
    gguf = advice["llama.cpp>=b10662"]["message"]
    assert (
        "hf download org/target config.json tokenizer.json tokenizer_config.json --local-dir TARGET" in gguf
    )

    # the advice, followed, works: the fetched directory stands in for TARGET
    local = tmp_path / "TARGET"
    local.mkdir()
    (local / "config.json").write_bytes((TARGET / "config.json").read_bytes())
    argv = shlex.split(
        cmd.split("dflash2-ckpt ", 1)[1]
        .replace("DRAFTER-flat", str(tmp_path / "flat"))
        .replace("--target TARGET", f"--target {local}")
    )
    assert invoke(*argv).exit_code == 0
    assert invoke("verify", str(tmp_path / "flat")).exit_code == 0


def test_without_a_target_the_placeholder_is_explained(tmp_path: Path) -> None:
    advice = _advice()
    assert "--target TARGET" in advice["speculators>=0.9,<0.10"]["command"]
    assert "must be a local directory" in advice["speculators>=0.9,<0.10"]["message"]


def test_a_local_target_directory_is_used_as_it_is() -> None:
    advice = _advice("--target", str(TARGET))
    flat = advice["speculators>=0.9,<0.10"]
    assert flat["command"].endswith(f"--target {TARGET}")
    assert "must be a local directory" not in flat["message"]
