"""The pre-commit hooks on repositories as publishers keep them: a target's or a tokenizer's config.json
beside the drafter's is skipped with a note, and an LFS pointer in place of the weights says so."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from _kit.cli import invoke_cli
from dflash2_ckpt.cli import main

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
POINTER = (
    "version https://git-lfs.github.com/spec/v1\n"
    "oid sha256:4d7a214614ab2935c943f9e0ff69d22eadbb8f32b1258daaa5e2ca24d17e2393\nsize 3848817896\n"
)


def hook(*args: str):
    return invoke_cli(main, ["hook", *args])


def repo(tmp_path: Path) -> Path:
    r = tmp_path / "repo"
    shutil.copytree(FIXTURES / "good" / "nested-v2", r / "drafter")
    shutil.copytree(FIXTURES / "targets" / "tiny-target", r / "target")
    (r / "tokenizer").mkdir()
    (r / "tokenizer" / "config.json").write_text(json.dumps({"model_type": "qwen3", "vocab_size": 64}))
    return r


def test_configs_that_are_not_drafters_are_skipped_with_a_note(tmp_path: Path) -> None:
    r = repo(tmp_path)
    files = [str(r / d / "config.json") for d in ("drafter", "target", "tokenizer")]
    res = hook("config", *files)
    assert res.exit_code == 0, res.output
    assert "DF304" not in res.output
    assert "target: not a drafter config (Qwen3ForCausalLM); skipped" in res.output.replace(str(r) + "/", "")
    doc = json.loads(hook("config", *files, "--format", "json").output)
    assert len(doc["checked"]) == 1 and doc["passed"]
    assert sorted(Path(s["path"]).name for s in doc["skipped"]) == ["target", "tokenizer"]


def test_a_dspark_config_is_still_judged(tmp_path: Path) -> None:
    d = tmp_path / "dspark"
    d.mkdir()
    shutil.copy(FIXTURES / "real" / "deepseek-ai_dspark_qwen3_8b_block7.config.json", d / "config.json")
    res = hook("config", str(d / "config.json"))
    assert res.exit_code == 1 and "DF304" in res.output


def test_an_lfs_pointer_says_to_run_git_lfs_pull(tmp_path: Path) -> None:
    r = repo(tmp_path)
    (r / "drafter" / "model.safetensors").write_text(POINTER)
    res = hook("verify", str(r / "drafter" / "model.safetensors"), "--format", "json")
    assert res.exit_code == 1
    [f] = [f for c in json.loads(res.output)["checked"] for f in c["findings"] if f["code"] == "DF603"]
    assert "Git LFS pointer" in f["message"] and "git lfs pull" in f["message"]
    assert "exceeds the" not in f["message"]
    res = invoke_cli(main, ["verify", str(r / "drafter")])
    assert "git lfs pull" in res.output
