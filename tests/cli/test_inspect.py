"""`inspect`: an unreadable header is exit 3 with the reason; `passed` only for a DFlash drafter."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from _kit.cli import one_json, run
from conftest import FIXTURES


@pytest.mark.parametrize(
    "name", ["header-truncated", "header-lies-about-length", "index-not-an-index", "shard-missing"]
)
def test_unreadable_header_or_index_is_exit_3_with_the_reason(name: str) -> None:
    code, out, err = run("inspect", str(FIXTURES / "broken" / name))
    assert code == 3 and out == "" and "0 tensors" not in err and ("DF60" in err)
    code, out, _ = run("inspect", str(FIXTURES / "broken" / name), "--format", "json")
    doc = one_json(out)["error"]
    assert code == 3 and doc["type"] == "HeaderError" and doc["message"].startswith("DF60")


def test_garbage_safetensors_is_exit_3(tmp_path: Path) -> None:
    d = tmp_path / "ckpt"
    shutil.copytree(FIXTURES / "good" / "nested-v2", d)
    for f in d.glob("*.safetensors"):
        f.write_bytes(b"\xff" * 64)
    code, out, _ = run("inspect", str(d), "--format", "json")
    assert code == 3 and "error" in one_json(out)


def test_dspark_is_never_passed() -> None:
    code, out, _ = run("inspect", str(FIXTURES / "broken" / "dspark-not-dflash"), "--format", "json")
    doc = one_json(out)
    assert code == 0 and doc["passed"] is False and doc["summary"]["version"] is None
    code, out, _ = run("verify", str(FIXTURES / "broken" / "dspark-not-dflash"), "--format", "json")
    assert one_json(out)["passed"] is False


def test_real_dspark_config_is_never_passed(tmp_path: Path) -> None:
    d = tmp_path / "dspark"
    d.mkdir()
    shutil.copy(FIXTURES / "real" / "deepseek-ai_dspark_qwen3_8b_block7.config.json", d / "config.json")
    code, out, _ = run("inspect", str(d), "--format", "json")
    assert code == 0 and one_json(out)["passed"] is False


def test_good_inspect_passes() -> None:
    code, out, _ = run("inspect", str(FIXTURES / "good" / "nested-v2"), "--format", "json")
    assert code == 0 and json.loads(out)["passed"] is True
