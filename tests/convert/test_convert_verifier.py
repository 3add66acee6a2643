"""The verifier named in a flat output loads from any working directory and says what it is.

Without the `[speculators]` extra (importing speculators.models pulls datasets, openai, hs-connectors, ...)
the output is checked here against the flat schema and what speculators' VerifierConfig reads
(`speculators_config.verifier.{name_or_path, architectures}`), with name_or_path resolved from another
directory; test_convert_speculators.py loads it in the real package where the extra is installed.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from _kit.cli import invoke_cli
from conftest import FIXTURES
from dflash2_ckpt.cli import main
from dflash2_ckpt.convert import convert, verifier_identity
from dflash2_ckpt.errors import UsageError
from dflash2_ckpt.formats.flat import FlatV1Config

SRC = FIXTURES / "good" / "nested-v1"
TARGET = FIXTURES / "targets" / "tiny-target"


def _verifier(d: Path) -> dict:
    cfg = json.loads((d / "config.json").read_text())
    FlatV1Config.model_validate(cfg)
    return cfg["speculators_config"]["verifier"]


def test_relative_target_becomes_an_absolute_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    work = tmp_path / "work"
    (work / "verifier").mkdir(parents=True)
    (work / "verifier" / "config.json").write_text((TARGET / "config.json").read_text())
    monkeypatch.chdir(work)
    res = invoke_cli(
        main, ["convert", str(SRC), "-o", str(tmp_path / "flat"), "--to", "flat", "--target", "verifier"]
    )
    assert res.exit_code == 0, res.output
    v = _verifier(tmp_path / "flat")
    assert v["name_or_path"] == str(work / "verifier") and os.path.isabs(v["name_or_path"])
    assert v["architectures"] == ["Qwen3ForCausalLM"]
    monkeypatch.chdir(tmp_path)  # another directory: the path still names the target
    assert (
        json.loads(Path(v["name_or_path"], "config.json").read_text())["architectures"] == v["architectures"]
    )


def test_recorded_repo_id_wins_over_the_path(tmp_path: Path) -> None:
    target = tmp_path / "t"
    target.mkdir()
    cfg = dict(json.loads((TARGET / "config.json").read_text()), _name_or_path="Qwen/Qwen3-8B")
    (target / "config.json").write_text(json.dumps(cfg))
    convert(SRC, tmp_path / "flat", to="flat", target=target)
    assert _verifier(tmp_path / "flat")["name_or_path"] == "Qwen/Qwen3-8B"


@pytest.mark.parametrize("recorded", ["/data/models/qwen", "./qwen", "qwen", "../a/b", "~/x/y", ""])
def test_recorded_local_paths_are_not_repo_ids(recorded: str, tmp_path: Path) -> None:
    v = verifier_identity(tmp_path / "t", {"_name_or_path": recorded, "architectures": ["A"]}, None)
    assert v.name_or_path == str((tmp_path / "t").absolute())


def test_verifier_name_alone_is_a_usage_error() -> None:
    with pytest.raises(UsageError):
        convert(SRC, "/nonexistent/never-written", to="flat", verifier_name="org/target", dry_run=True)
    res = invoke_cli(
        main, ["convert", str(SRC), "-o", "/nonexistent/x", "--to", "flat", "--verifier-name", "org/target"]
    )
    assert res.exit_code == 2 and "--verifier-arch" in res.output


def test_verifier_name_with_arch(tmp_path: Path) -> None:
    convert(SRC, tmp_path / "flat", to="flat", verifier_name="org/target", verifier_architectures=("X",))
    assert _verifier(tmp_path / "flat") == {"name_or_path": "org/target", "architectures": ["X"]}
