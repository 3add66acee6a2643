"""The GitHub Action in a workflow's day: its install cached under a key of its own version and files,
compat annotating only the engines the workflow asked for, and the counts as step outputs."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from .test_action import ACTION, GOOD, ROOT, _step, parse_outputs, run_action

ANNOTATION = re.compile(r"^::(error|warning|notice)\b", re.M)


def _key(action_path: Path, tmp: Path, runner_temp: str = "/home/runner/work/_temp") -> str:
    """The `key` step as the runner runs it: its env, its run line through bash, $GITHUB_OUTPUT read back."""
    step = _step("key")
    out = tmp / f"out-{len(list(tmp.glob('out-*')))}"
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("INPUT_", "GITHUB_"))},
        "INPUT_PYTHON": sys.executable,
        "GITHUB_ACTION_PATH": str(action_path),
        "GITHUB_OUTPUT": str(out),
        "RUNNER_TEMP": runner_temp,
    }
    subprocess.run(
        [step["shell"], "-e", "-c", step["run"]], env=env, check=True, capture_output=True, timeout=60
    )
    return parse_outputs(out.read_text())["key"]


def _action_copy(tmp: Path) -> Path:
    copy = tmp / "action"
    shutil.copytree(
        ROOT / "dflash2_ckpt", copy / "dflash2_ckpt", ignore=shutil.ignore_patterns("__pycache__")
    )
    shutil.copy(ROOT / "pyproject.toml", copy / "pyproject.toml")
    return copy


def test_the_install_is_cached_under_the_actions_version_and_files(tmp_path: Path) -> None:
    """It ran an uncached `pip install` on every run; now the venv is restored by actions/cache under a key
    that changes with the package version, the action's files and the interpreter, and only a miss installs."""
    cache, install, run = (
        _step("cache"),
        next(s for s in ACTION["runs"]["steps"] if "pip install" in s.get("run", "")),
        _step("run"),
    )
    assert (
        cache["uses"].startswith("actions/cache@") and cache["with"]["key"] == "${{ steps.key.outputs.key }}"
    )
    assert cache["with"]["path"] == "${{ runner.temp }}/dflash2-ckpt-venv"
    assert (
        "$RUNNER_TEMP/dflash2-ckpt-venv" in install["run"]
        and "$RUNNER_TEMP/dflash2-ckpt-venv/bin/python" in run["run"]
    )
    assert install["if"] == "steps.cache.outputs.cache-hit != 'true'"
    steps = [s.get("id") for s in ACTION["runs"]["steps"]]
    assert (
        steps.index("key")
        < steps.index("cache")
        < ACTION["runs"]["steps"].index(install)
        < steps.index("run")
    )

    copy = _action_copy(tmp_path)
    first = _key(copy, tmp_path)
    assert first.startswith("dflash2-ckpt-0.1.0-") and first == _key(copy, tmp_path)  # a rerun hits
    assert _key(copy, tmp_path, runner_temp="/elsewhere") != first  # a venv is tied to its path
    pyproject = copy / "pyproject.toml"
    pyproject.write_text(pyproject.read_text().replace('version = "0.1.0"', 'version = "0.2.0"', 1))
    bumped = _key(copy, tmp_path)
    assert bumped.startswith("dflash2-ckpt-0.2.0-") and bumped != first
    module = copy / "dflash2_ckpt" / "cli" / "action.py"
    module.write_text(module.read_text() + "\n# a moved branch ref\n")
    assert _key(copy, tmp_path) not in (first, bumped)


def test_compat_without_engines_annotates_no_engine_it_was_not_asked_for(tmp_path: Path) -> None:
    """compat: true printed ::error for llama.cpp (DF804, DF814) on a run that exited 0, though the workflow
    named no engine; the verdicts are now one notice, and the JSON report still holds every engine."""
    code, out, outputs, work = run_action(tmp_path, paths=GOOD, compat="true", **{"json-file": "r.json"})
    assert code == 0 and outputs["exit-code"] == "0", out
    assert not re.search(r"^::(error|warning)", out, re.M), out
    notices = [line for line in out.splitlines() if line.startswith("::notice")]
    assert len(notices) == 1 and "llama.cpp >=b10662: fails" in notices[0] and "`engines` input" in notices[0]
    assert outputs["errors"] == "0" and outputs["findings"] == "0"
    compat = [r for r in json.loads((work / "r.json").read_text())["runs"] if r["command"] == "compat"]
    assert {e["engine"] for e in compat[0]["report"]["engines"]} >= {"vllm", "sglang", "llama.cpp"}


def test_compat_annotates_the_engines_asked_for_and_counts_them(tmp_path: Path) -> None:
    code, out, outputs, _ = run_action(tmp_path, paths=GOOD, compat="true", engines="vllm@0.28.0")
    assert code == 1 and outputs["exit-code"] == "1"
    titles = re.findall(r"^::\w+ [^:]*title=(DF\d+)", out, re.M)
    assert titles == ["DF802"], out  # vLLM 0.28.0's breakage, nothing else
    assert "llama.cpp" not in "".join(line for line in out.splitlines() if ANNOTATION.match(line))
    assert (outputs["findings"], outputs["errors"], outputs["warnings"], outputs["json-file"]) == (
        "1",
        "1",
        "0",
        "",
    )


def test_compat_that_could_not_run_still_shows_why(tmp_path: Path) -> None:
    code, out, outputs, _ = run_action(tmp_path, paths=str(tmp_path / "missing"), compat="true")
    assert code == 3 and outputs["exit-code"] == "3"
    errors = [x for x in out.splitlines() if x.startswith("::error")]
    assert len(errors) == 2 and all("SourceError" in e for e in errors)  # verify's and compat's


def test_every_output_the_recipe_reads_is_declared_and_written(tmp_path: Path) -> None:
    """The outputs action.yml declares are the ones the script writes, and the CI recipe reads only those."""
    import yaml

    declared = set(ACTION["outputs"])
    assert all(v["value"] == f"${{{{ steps.run.outputs.{k} }}}}" for k, v in ACTION["outputs"].items())
    _, _, written, _ = run_action(tmp_path, paths=GOOD)
    assert set(written) == declared
    recipe = (ROOT / "docs" / "github-actions-verify.yml").read_text()
    yaml.safe_load(recipe)
    used = set(re.findall(r"steps\.verify\.outputs\.([\w-]+)", recipe))
    assert used and used <= declared, used - declared


def test_engines_named_by_the_settings_are_asked_for_too(tmp_path: Path) -> None:
    settings = tmp_path / "ci.toml"
    settings.write_text('engines = ["vllm@0.28.0"]\n')
    code, out, outputs, _ = run_action(tmp_path, paths=GOOD, compat="true", config=str(settings))
    assert code == 1 and re.findall(r"^::\w+ [^:]*title=(DF\d+)", out, re.M) == ["DF802"], out
    assert outputs["errors"] == "1"
