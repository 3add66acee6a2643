"""Packaging habits: one version source, the documented tags agreeing with it, py.typed, shell completion."""

from __future__ import annotations

import re
import sys
from pathlib import Path

from _kit.cli import invoke_cli
from dflash2_ckpt.cli import main

ROOT = Path(__file__).resolve().parents[1]
if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib
VERSION = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]


def test_version_comes_from_the_metadata_alone() -> None:
    import dflash2_ckpt
    from dflash2_ckpt.report.sarif import document

    assert dflash2_ckpt.__version__ == VERSION
    res = invoke_cli(main, ["--version"])
    assert res.exit_code == 0 and res.output.strip().endswith(f"version {VERSION}")
    literal = [
        p for p in (ROOT / "dflash2_ckpt").rglob("*.py") if re.search(r'__version__\s*=\s*"', p.read_text())
    ]
    assert literal == []  # no second copy of the number to forget

    from dflash2_ckpt.findings import Verdict

    class Empty(Verdict):
        kind, subject, findings = "verify", "x", ()

    assert document(Empty())["runs"][0]["tool"]["driver"]["version"] == VERSION


def test_documented_tags_name_this_version() -> None:
    tag = f"v{VERSION}"
    docs = {
        p: p.read_text()
        for p in [
            ROOT / "docs" / "hooks.md",
            ROOT / ".pre-commit-hooks.yaml",
            ROOT / "action.yml",
            ROOT / "docs" / "hub.md",
            ROOT / "docs" / "github-actions-verify.yml",
        ]
    }
    revs = {(p.name, r) for p, t in docs.items() for r in re.findall(r"rev: (v[\w.]+)", t)}
    refs = {(p.name, r) for p, t in docs.items() for r in re.findall(r"dflash2-ckpt@(v[\w.]+)", t)}
    assert revs and refs and {r for _, r in revs | refs} == {tag}, revs | refs
    assert f"## {VERSION}" in (ROOT / "CHANGELOG.md").read_text()


def test_py_typed_ships() -> None:
    assert (ROOT / "dflash2_ckpt" / "py.typed").is_file()
    data = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]
    assert "py.typed" in data["dflash2_ckpt"]


def test_shell_completion_lists_the_commands() -> None:
    env = {"_DFLASH2_CKPT_COMPLETE": "bash_complete", "COMP_WORDS": "dflash2-ckpt ver", "COMP_CWORD": "1"}
    res = invoke_cli(main, [], prog_name="dflash2-ckpt", env=env)
    assert res.output.splitlines() == ["plain,verify"]
    res = invoke_cli(main, [], prog_name="dflash2-ckpt", env={"_DFLASH2_CKPT_COMPLETE": "bash_source"})
    assert "_dflash2_ckpt_completion" in res.output
    assert "_DFLASH2_CKPT_COMPLETE=bash_source dflash2-ckpt" in (ROOT / "docs" / "commands.md").read_text()


def test_license_is_an_spdx_expression() -> None:
    # a TOML table is deprecated by setuptools (an install warns, and builds stop after 2027-02-18)
    data = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert data["project"]["license"] == "Apache-2.0"
    assert "setuptools>=77" in data["build-system"]["requires"][0]


def test_the_pre_commit_ruff_is_the_ruff_ci_runs() -> None:
    import yaml

    config = yaml.safe_load((ROOT / ".pre-commit-config.yaml").read_text())
    rev = next(r["rev"] for r in config["repos"] if r["repo"].endswith("/ruff-pre-commit"))
    extra = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]["test"]
    pin = next(d for d in extra if d.startswith("ruff"))
    assert pin.startswith(f"ruff>={rev.removeprefix('v')},"), (rev, pin)
    assert "ruff check" in (ROOT / ".ci" / "run").read_text()
    assert "ruff format --check" in (ROOT / ".ci" / "run").read_text()
