"""The GitHub Action (action.yml), run as a runner runs it: each step's `env:` with the inputs filled in,
its `run:` through bash, GITHUB_OUTPUT / GITHUB_STEP_SUMMARY files, the venv under RUNNER_TEMP."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from conftest import FIXTURES, ROOT

GOOD = str(FIXTURES / "good" / "nested-v2")
BROKEN = str(FIXTURES / "broken" / "fc-wrong-shape")
ACTION = yaml.safe_load((ROOT / "action.yml").read_text())
EXPR = re.compile(r"\$\{\{\s*inputs\.([\w-]+)\s*\}\}")


def _step(name: str) -> dict[str, Any]:
    return next(s for s in ACTION["runs"]["steps"] if s.get("id") == name)


def parse_outputs(text: str) -> dict[str, str]:
    """$GITHUB_OUTPUT as the runner reads it (actions/runner, file command `SetOutputFileCommand`): `name=value`
    lines and `name<<DELIMITER` blocks; a later value of a name replaces an earlier one."""
    out: dict[str, str] = {}
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        i += 1
        if not line:
            continue
        eq, heredoc = line.find("="), line.find("<<")
        if eq >= 0 and (heredoc < 0 or eq < heredoc):
            out[line[:eq]] = line[eq + 1 :]
            continue
        name, delimiter = line[:heredoc], line[heredoc + 2 :]
        end = lines.index(delimiter, i)
        out[name] = "\n".join(lines[i:end])
        i = end + 1
    return out


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
    work.mkdir(exist_ok=True)  # a test may lay out the checkout first
    full = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("INPUT_", "GITHUB_"))},
        **env,
        "RUNNER_TEMP": str(tmp / "runner"),
        "GITHUB_ACTION_PATH": str(ROOT),
        "GITHUB_OUTPUT": str(outputs),
        "GITHUB_STEP_SUMMARY": str(summary),
        "PYTHONPATH": str(ROOT),
    }
    proc = subprocess.run(
        [step["shell"], "-e", "-c", step["run"]],
        cwd=work,
        env=full,
        capture_output=True,
        text=True,
        timeout=120,
    )
    out = parse_outputs(outputs.read_text()) if outputs.exists() else {}
    return proc.returncode, proc.stdout, out, work


def test_the_action_is_a_composite_that_installs_its_own_checkout() -> None:
    assert ACTION["runs"]["using"] == "composite"
    install = next(s for s in ACTION["runs"]["steps"] if "pip install" in s.get("run", ""))
    assert '"$GITHUB_ACTION_PATH"' in install["run"] and "pip install" in install["run"]
    used = {
        m.group(1)
        for s in ACTION["runs"]["steps"]
        for v in s.get("env", {}).values()
        for m in EXPR.finditer(str(v))
    }
    assert used == set(ACTION["inputs"])  # every input reaches the script


def test_annotations_and_one_sarif_file_for_several_drafters(tmp_path: Path) -> None:
    code, out, outputs, work = run_action(tmp_path, paths=f"{GOOD}\n{BROKEN}", **{"json-file": "report.json"})
    assert code == 1
    assert re.search(r"^::error file=[^,]*config\.json,(line=\d+,)?title=DF203 wrong-shape::", out, re.M), out
    assert outputs == {
        "exit-code": "1",
        "sarif-file": "dflash2-ckpt.sarif",
        "findings": "1",
        "errors": "1",
        "warnings": "0",
        "json-file": "report.json",
    }  # the broken drafter's one DF203
    sarif = json.loads((work / "dflash2-ckpt.sarif").read_text())
    assert sarif["version"] == "2.1.0" and len(sarif["runs"]) == 2
    assert sarif["runs"][0]["results"] == [] and sarif["runs"][1]["results"]
    assert all(r["level"] in ("error", "warning", "note") for r in sarif["runs"][1]["results"])
    report = json.loads((work / "report.json").read_text())
    assert [(r["path"], r["exit_code"], r["report"]["passed"]) for r in report["runs"]] == [
        (GOOD, 0, True),
        (BROKEN, 1, False),
    ]
    assert "| verify | findings |" in (tmp_path / "step_summary").read_text()


def test_compat_strict_and_fail_on_never(tmp_path: Path) -> None:
    code, out, outputs, _ = run_action(
        tmp_path, paths=GOOD, compat="true", engines="vllm@0.28.0", **{"fail-on": "never"}
    )
    assert code == 0 and outputs["exit-code"] == "1"  # compat said no for vllm 0.28.0; reported only
    assert "dflash2-ckpt compat" in out and "--engine=vllm@0.28.0" in out


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
    settings.write_text('ignore = ["DF203"]\n')  # the broken drafter's only error
    code, out, outputs, _ = run_action(tmp_path, paths=BROKEN, config=str(settings))
    assert code == 0 and outputs["exit-code"] == "0" and f"--config={settings}" in out


# -- inputs as a pull request may fill them -------------------------------------------------------------------


def test_a_path_line_cannot_become_an_option(tmp_path: Path) -> None:
    """Each line of `paths` is one path after `--`: `d --output=json=/anywhere/x` used to write /anywhere/x."""
    target = tmp_path / "anywhere" / "x"
    target.parent.mkdir()
    code, out, outputs, _ = run_action(tmp_path, paths=f"{GOOD} --output=json={target}")
    assert not target.exists()
    assert code == 3 and outputs["exit-code"] == "3"  # one path, named as written, that does not exist
    assert f" -- '{GOOD} --output=json={target}'" in out


def test_paths_with_spaces_and_commas_one_per_line(tmp_path: Path) -> None:
    odd = tmp_path / "my drafter, v2"
    shutil.copytree(GOOD, odd)
    code, out, outputs, work = run_action(tmp_path, paths=f"  {odd}  \n\n{GOOD}\n", **{"json-file": "r.json"})
    assert code == 0 and outputs["exit-code"] == "0", out
    assert [r["path"] for r in json.loads((work / "r.json").read_text())["runs"]] == [str(odd), GOOD]


INJECTED = "x\n::error title=INJECTED::owned\r\n::warning::also"


@pytest.mark.parametrize("name", ["target", "revision", "select", "ignore", "config", "paths", "engines"])
def test_no_input_can_print_a_workflow_command(tmp_path: Path, name: str) -> None:
    """The `::group::` line printed the command with shlex.join, newlines kept: a real annotation."""
    inputs = {
        "paths": GOOD,
        name: INJECTED if name != "paths" else f"{GOOD}\nx ::error title=INJECTED::owned",
    }
    _, out, _, _ = run_action(tmp_path, **inputs)
    commands = [line for line in out.splitlines() if line.startswith("::")]
    assert not any(
        "INJECTED" in line
        and not line.startswith(
            ("::group::", "::error title=dflash2-ckpt", "::error file=", "::error title=DF")
        )
        for line in commands
    ), out
    assert not any(
        line.startswith(("::error title=INJECTED", "::warning::also")) for line in out.splitlines()
    )


def test_a_newline_in_sarif_file_cannot_set_another_output(tmp_path: Path) -> None:
    """`sarif-file: "x.sarif\\nexit-code=0"` appended exit-code=0 after the real exit-code=3."""
    name = "x.sarif\nexit-code=0"
    code, _, outputs, work = run_action(tmp_path, paths=str(tmp_path / "missing"), **{"sarif-file": name})
    assert code == 3
    assert {k: outputs[k] for k in ("exit-code", "sarif-file")} == {"exit-code": "3", "sarif-file": name}
    assert set(outputs) == {"exit-code", "sarif-file", "findings", "errors", "warnings", "json-file"}
    assert json.loads((work / name).read_text())["version"] == "2.1.0"
    text = (tmp_path / "github_output").read_text()
    assert "exit-code<<ghadelimiter_" in text and "\nexit-code=0\n" in text  # inside a block, as data


def test_a_committed_link_named_like_the_sarif_file_is_not_written_through(tmp_path: Path) -> None:
    victim = tmp_path / "victim"
    victim.write_text("keep me\n")
    (tmp_path / "workspace").mkdir()
    (tmp_path / "workspace" / "dflash2-ckpt.sarif").symlink_to(victim)
    code, out, outputs, _ = run_action(tmp_path, paths=GOOD)
    assert victim.read_text() == "keep me\n"
    assert code == 2 and outputs["exit-code"] == "2"
    assert re.search(
        r"^::error title=dflash2-ckpt::not written: dflash2-ckpt\.sarif: is a symbolic link", out, re.M
    ), out


def test_the_json_file_cannot_overwrite_the_drafter(tmp_path: Path) -> None:
    d = tmp_path / "d"
    shutil.copytree(GOOD, d)
    before = (d / "config.json").read_bytes()
    code, out, _, _ = run_action(tmp_path, paths=str(d), **{"json-file": str(d / "config.json")})
    assert (d / "config.json").read_bytes() == before
    assert code == 2 and "a file this command reads" in out


def test_a_surrogate_key_is_a_finding_not_a_crash(tmp_path: Path) -> None:
    """A config key with a lone surrogate crashed `--format github` (exit 3) in the action."""
    d = tmp_path / "d"
    shutil.copytree(GOOD, d)
    cfg = json.loads((d / "config.json").read_text())
    cfg["k\ud800"] = 1
    (d / "config.json").write_text(json.dumps(cfg))
    code, out, outputs, work = run_action(tmp_path, paths=str(d))
    assert code == 1 and outputs["exit-code"] == "1", out
    assert re.search(r"^::error file=[^,]*config\.json,(line=\d+,)?title=DF101 ", out, re.M), out
    [run] = json.loads((work / "dflash2-ckpt.sarif").read_text())["runs"]
    assert [r["ruleId"] for r in run["results"]] == ["DF101"]
