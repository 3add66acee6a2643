"""The GitHub Action (action.yml), run as a runner runs it: each step's `env:` with the inputs filled in,
its `run:` through bash, GITHUB_OUTPUT / GITHUB_STEP_SUMMARY files, the venv under RUNNER_TEMP."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

from conftest import FIXTURES, ROOT

GOOD = str(FIXTURES / "good" / "nested-v2")
BROKEN = str(FIXTURES / "broken" / "fc-wrong-shape")
ACTION = yaml.safe_load((ROOT / "action.yml").read_text())
EXPR = re.compile(r"\$\{\{\s*inputs\.([\w-]+)\s*\}\}")


def _step(name: str) -> dict[str, Any]:
    return next(s for s in ACTION["runs"]["steps"] if s.get("id") == name)


def run_action(tmp: Path, **inputs: str) -> tuple[int, str, dict[str, str], Path]:
    """The `run` step with `inputs` (the rest at their defaults); the install step's venv is this interpreter."""
    unknown = set(inputs) - set(ACTION["inputs"])
    assert not unknown, unknown
    values = {k: str(v.get("default", "")) for k, v in ACTION["inputs"].items()} | inputs
    step = _step("run")
    env = {k: EXPR.sub(lambda m: values[m.group(1)], str(v)) for k, v in step["env"].items()}
    venv_bin = tmp / "runner" / "dflash2-ckpt-venv" / "bin"
    venv_bin.mkdir(parents=True)
    (venv_bin / "python").write_text(f'#!/bin/sh\nexec {sys.executable} "$@"\n')
    (venv_bin / "python").chmod(0o755)
    outputs, summary = tmp / "github_output", tmp / "step_summary"
    work = tmp / "workspace"
    work.mkdir()
    full = {**{k: v for k, v in os.environ.items() if not k.startswith(("INPUT_", "GITHUB_"))}, **env,
            "RUNNER_TEMP": str(tmp / "runner"), "GITHUB_ACTION_PATH": str(ROOT), "GITHUB_OUTPUT": str(outputs),
            "GITHUB_STEP_SUMMARY": str(summary), "PYTHONPATH": str(ROOT)}
    proc = subprocess.run([step["shell"], "-e", "-c", step["run"]], cwd=work, env=full, capture_output=True,
                          text=True, timeout=120)
    out = dict(line.split("=", 1) for line in outputs.read_text().splitlines()) if outputs.exists() else {}
    return proc.returncode, proc.stdout, out, work


def test_the_action_is_a_composite_that_installs_its_own_checkout() -> None:
    assert ACTION["runs"]["using"] == "composite"
    install = ACTION["runs"]["steps"][0]
    assert '"$GITHUB_ACTION_PATH"' in install["run"] and "pip install" in install["run"]
    used = {m.group(1) for s in ACTION["runs"]["steps"] for v in s.get("env", {}).values()
            for m in EXPR.finditer(str(v))}
    assert used == set(ACTION["inputs"])           # every input reaches the script


def test_annotations_and_one_sarif_file_for_several_drafters(tmp_path: Path) -> None:
    code, out, outputs, work = run_action(tmp_path, paths=f"{GOOD}\n{BROKEN}", **{"json-file": "report.json"})
    assert code == 1
    assert re.search(r"^::error file=[^,]*config\.json,(line=\d+,)?title=DF203 wrong-shape::", out, re.M), out
    assert outputs == {"exit-code": "1", "sarif-file": "dflash2-ckpt.sarif"}
    sarif = json.loads((work / "dflash2-ckpt.sarif").read_text())
    assert sarif["version"] == "2.1.0" and len(sarif["runs"]) == 2
    assert sarif["runs"][0]["results"] == [] and sarif["runs"][1]["results"]
    assert all(r["level"] in ("error", "warning", "note") for r in sarif["runs"][1]["results"])
    report = json.loads((work / "report.json").read_text())
    assert [(r["path"], r["exit_code"], r["report"]["passed"]) for r in report["runs"]] == \
        [(GOOD, 0, True), (BROKEN, 1, False)]
    assert "| verify | findings |" in (tmp_path / "step_summary").read_text()


def test_compat_strict_and_fail_on_never(tmp_path: Path) -> None:
    code, out, outputs, _ = run_action(tmp_path, paths=GOOD, compat="true", engines="vllm@0.28.0",
                                       **{"fail-on": "never"})
    assert code == 0 and outputs["exit-code"] == "1"        # compat said no for vllm 0.28.0; reported only
    assert "dflash2-ckpt compat" in out and "--engine vllm@0.28.0" in out


def test_an_unreadable_repo_is_one_error_annotation_and_exit_3(tmp_path: Path) -> None:
    code, out, outputs, work = run_action(tmp_path, paths=str(tmp_path / "missing"))
    assert code == 3 and outputs["exit-code"] == "3"
    errors = [x for x in out.splitlines() if x.startswith("::error")]
    assert len(errors) == 1 and "SourceError" in errors[0]
    sarif = json.loads((work / "dflash2-ckpt.sarif").read_text())
    assert sarif["runs"][0]["invocations"][0]["executionSuccessful"] is False


def test_empty_paths_is_a_usage_error(tmp_path: Path) -> None:
    code, out, _, _ = run_action(tmp_path, paths=" ")
    assert code == 2 and out.startswith("::error ")


def test_settings_file_input_reaches_verify(tmp_path: Path) -> None:
    settings = tmp_path / "ci.toml"
    settings.write_text('ignore = ["DF203"]\n')            # the broken drafter's only error
    code, out, outputs, _ = run_action(tmp_path, paths=BROKEN, config=str(settings))
    assert code == 0 and outputs["exit-code"] == "0" and f"--config {settings}" in out
