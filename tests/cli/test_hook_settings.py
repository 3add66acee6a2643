"""[tool.dflash2-ckpt] resolved per checkpoint wherever a checkpoint is judged: the pre-commit hooks (each
file mapped to its checkpoint directory), audit (each row), verify; per-path select / ignore extend the
table's; per-path target pairs each drafter with its own target; `config --show PATH` says what matched."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from _kit.cli import one_json, run
from conftest import FIXTURES

PYPROJECT = """[tool.dflash2-ckpt]
ignore = ["DF5"]
target = "targets/tiny"

[tool.dflash2-ckpt.per-path."drafters/broken-drafter"]
ignore = ["DF106"]
"""


def _target(root: Path, name: str, **changes: object) -> None:
    shutil.copytree(FIXTURES / "targets" / "tiny-target", root / "targets" / name)
    cfg = root / "targets" / name / "config.json"
    cfg.write_text(json.dumps({**json.loads(cfg.read_text()), **changes}))


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A publisher's repository: a drafter known to have DF106 (an entry ignores it), a copy no entry names,
    two good drafters, a target each can pair with and a wider one; pre-commit runs at its root."""
    for name in ("broken-drafter", "other-broken"):
        shutil.copytree(FIXTURES / "broken" / "mask-id-out-of-vocab", tmp_path / "drafters" / name)
    for name in ("for-tiny", "for-wide"):
        shutil.copytree(FIXTURES / "good" / "nested-v2", tmp_path / "drafters" / name)
    _target(tmp_path, "tiny")
    _target(tmp_path, "wide", hidden_size=48)  # DF502 against these drafters
    (tmp_path / "pyproject.toml").write_text(PYPROJECT)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def codes(doc: dict[str, object], name: str) -> set[str]:
    checked = doc["checked"]
    assert isinstance(checked, list)
    return {f["code"] for c in checked if Path(c["subject"]).name == name for f in c["findings"]}


@pytest.mark.parametrize("level", ["config", "verify"])
def test_hooks_apply_the_per_path_entry_of_each_files_checkpoint(repo: Path, level: str) -> None:
    files = [
        "drafters/broken-drafter/config.json",
        "drafters/broken-drafter/model.safetensors",
        "drafters/for-tiny/config.json",
    ]
    code, out, _ = run("hook", level, *files)
    assert code == 0, out
    code, out, _ = run("hook", level, *files, "drafters/other-broken/config.json", "--format", "json")
    doc = one_json(out)
    assert code == 1 and codes(doc, "broken-drafter") == set() and codes(doc, "other-broken") == {"DF106"}


def test_per_path_ignore_extends_the_tables(repo: Path) -> None:
    # the table ignores DF5 (the pairing with the tiny target says DF505); the entry adds DF106
    assert run("verify", "drafters/broken-drafter")[0] == 0
    code, out, _ = run("verify", "drafters/other-broken", "--format", "json")
    assert code == 1 and {f["code"] for f in one_json(out)["findings"]} == {"DF106"}


def test_command_line_ignore_replaces_the_tables_the_entrys_stays(repo: Path) -> None:
    code, out, _ = run("hook", "verify", "drafters/broken-drafter/config.json", "--ignore", "DF4")
    assert code == 1 and "DF505" in out and "DF106" not in out
    code, out, _ = run("hook", "verify", "drafters/broken-drafter/config.json", "--select", "DF106")
    assert code == 0, out


def test_per_path_target_pairs_each_drafter_with_its_own(repo: Path) -> None:
    (repo / "pyproject.toml").write_text(
        '[tool.dflash2-ckpt.per-path."drafters/for-tiny"]\ntarget = "targets/tiny"\n'
        '[tool.dflash2-ckpt.per-path."drafters/for-wide"]\ntarget = "targets/wide"\n'
    )
    files = ["drafters/for-tiny/config.json", "drafters/for-wide/config.json"]
    for level in ("config", "verify"):
        code, out, _ = run("hook", level, *files, "--format", "json")
        doc = one_json(out)
        assert code == 1 and codes(doc, "for-tiny") == set() and codes(doc, "for-wide") == {"DF502"}
    code, out, _ = run("hook", "verify", *files)
    assert "drafters/for-wide/config.json" in out and "for-tiny" not in out
    # the command line's --target pairs them all with one
    code, out, _ = run("hook", "verify", *files, "--target", "targets/wide", "--format", "json")
    assert code == 1 and codes(one_json(out), "for-tiny") == {"DF502"}


def test_config_show_lists_the_matched_entries_and_the_result(repo: Path) -> None:
    pyproject = str(repo / "pyproject.toml")
    code, out, _ = run("config", "--show", "drafters/broken-drafter", "--format", "json")
    doc = one_json(out)
    assert (
        code == 0
        and doc["matched"] == ["drafters/broken-drafter"]
        and doc["path"] == "drafters/broken-drafter"
    )
    assert doc["settings"]["ignore"] == {
        "value": ["DF5", "DF106"],
        "origin": f'{pyproject} [tool.dflash2-ckpt] + {pyproject} [tool.dflash2-ckpt.per-path."drafters/broken-drafter"]',
    }
    assert doc["settings"]["target"]["value"] == str(
        repo / "targets" / "tiny"
    )  # relative to the file's folder
    code, out, _ = run("config", "--show", "drafters/broken-drafter")
    assert code == 0 and 'per-path entries matched: "drafters/broken-drafter"' in out
    assert '["DF5", "DF106"]' in out
    doc = one_json(run("config", "--show", "drafters/other-broken", "--ignore", "DF4", "--format", "json")[1])
    assert doc["matched"] == [] and doc["settings"]["ignore"] == {"value": ["DF4"], "origin": "command line"}
    doc = one_json(
        run("config", "--show", "drafters/broken-drafter", "--ignore", "DF4", "--format", "json")[1]
    )
    assert doc["settings"]["ignore"]["value"] == ["DF4", "DF106"]


def test_per_path_select_extends_a_tables_select(repo: Path) -> None:
    (repo / "pyproject.toml").write_text(
        '[tool.dflash2-ckpt]\nselect = ["DF1"]\ntarget = "targets/wide"\n'
        '[tool.dflash2-ckpt.per-path."drafters/for-*"]\nselect = ["DF502"]\n'
    )
    doc = one_json(run("config", "--show", "drafters/for-wide", "--format", "json")[1])
    assert doc["settings"]["select"]["value"] == ["DF1", "DF502"]
    assert run("verify", "drafters/for-wide")[0] == 1  # DF502 selected for it
    assert run("verify", "drafters/other-broken", "--target", "targets/wide")[0] == 1  # DF106 is a DF1
    assert run("verify", "drafters/for-wide", "--select", "DF1")[0] == 0  # the command line's select replaces


def test_audit_judges_each_row_by_its_own_settings(repo: Path) -> None:
    code, out, _ = run("audit", "drafters/broken-drafter", "drafters/other-broken", "--format", "json")
    rows = {Path(r["input"]).name: r for r in one_json(out)["rows"]}
    assert {f["code"] for f in rows["broken-drafter"]["findings"]} == set()
    assert rows["broken-drafter"]["counts"]["error"] == 0
    assert "DF106" in {f["code"] for f in rows["other-broken"]["findings"]}
    assert rows["other-broken"]["counts"]["error"] >= 1


def test_per_path_strict_holds_for_its_directory_only(repo: Path) -> None:
    (repo / "pyproject.toml").write_text(
        "[tool.dflash2-ckpt]\nstrict = true\n"
        '[tool.dflash2-ckpt.per-path."drafters/for-wide"]\nstrict = false\n'
    )
    code, out, _ = run(
        "hook", "config", "drafters/for-tiny/config.json", "drafters/for-wide/config.json", "--format", "json"
    )
    doc = one_json(out)
    assert {Path(c["subject"]).name: c["strict"] for c in doc["checked"]} == {
        "for-tiny": True,
        "for-wide": False,
    }
    assert doc["strict"] is False
