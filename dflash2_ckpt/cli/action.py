"""What the GitHub Action (action.yml at the repository root) runs: `python -m dflash2_ckpt.cli.action`.

A composite action hands its inputs to a step as environment variables; this reads them (INPUT_PATHS,
INPUT_TARGET, ...), runs `dflash2-ckpt verify` once per path or Hub repo (annotations on stdout, SARIF
and JSON to files through --output, so one run gives all three), optionally `compat`, then merges the
SARIF runs into one file for github/codeql-action/upload-sarif, and writes the step outputs and a job
summary. The exit code is the worst of the runs (0 passed, 1 findings, 2 usage, 3 could not run) unless
`fail-on` is `never`. Not a click command: it drives the CLI in child processes, as a workflow would.

Inputs are untrusted text (a workflow may fill them from a pull request): each path is one line, passed
after `--` so no line can become an option; option values go as `--name=value`; every line printed goes
through the workflow-command escaping of report/github.py; step outputs use the heredoc form with a random
delimiter; the SARIF and JSON files are written as every report file is (report/write.py).
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import tempfile
import uuid
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..errors import Dflash2Error
from ..report.github import annotation, escape_data
from ..report.safe import printable
from ..report.write import destination, files_read, write_files

TRUE = ("1", "true", "yes", "on")


def _input(env: Mapping[str, str], name: str, default: str = "") -> str:
    return env.get(f"INPUT_{name.upper().replace('-', '_')}", default).strip() or default


def _words(text: str) -> list[str]:
    """A list of names (engines): one item per line or separated by spaces or commas."""
    return [w for line in text.splitlines() for w in line.replace(",", " ").split() if w]


def _lines(text: str) -> list[str]:
    """The `paths` input: one path per line, as written (spaces and commas are part of it)."""
    return [line.strip() for line in text.splitlines() if line.strip()]


def _flags(env: Mapping[str, str]) -> list[str]:
    """The options verify shares with the inputs (empty inputs add nothing)."""
    out: list[str] = []
    for name in ("target", "revision", "select", "ignore", "config"):
        if value := _input(env, name):
            out.append(f"--{name}={value}")  # one word: a value can never be read as an option
    for engine in _words(_input(env, "engines")):
        out.append(f"--engine={engine}")
    if _input(env, "strict").lower() in TRUE:
        out.append("--strict")
    return out


def _cli(args: list[str], env: Mapping[str, str]) -> int:
    cmd = [sys.executable, "-m", "dflash2_ckpt", *args]
    print(f"::group::{escape_data('dflash2-ckpt ' + shlex.join(args))}", flush=True)
    try:
        return subprocess.call(cmd, env=dict(env))
    finally:
        print("::endgroup::", flush=True)


def merge_sarif(files: list[Path]) -> dict[str, Any]:
    """One SARIF log with every run (code scanning takes several runs of one tool in one file)."""
    docs = [json.loads(f.read_text(encoding="utf-8")) for f in files if f.is_file() and f.stat().st_size]
    if not docs:
        return {"$schema": "https://json.schemastore.org/sarif-2.1.0.json", "version": "2.1.0", "runs": []}
    merged = dict(docs[0])
    merged["runs"] = [run for d in docs for run in d.get("runs", [])]
    return merged


def _cell(text: str) -> str:
    """A Markdown table cell: one line, no column break, no code span break."""
    return printable(text).replace("\n", " ").replace("|", "\\|").replace("`", "'")


def _summary(rows: list[tuple[str, str, int, dict[str, Any] | None]]) -> str:
    verdict = {0: "passed", 1: "findings", 2: "usage error", 3: "could not run"}
    lines = [
        "### dflash2-ckpt",
        "",
        "| checked | command | result | errors | warnings |",
        "|---|---|---|---|---|",
    ]
    for subject, command, code, doc in rows:
        counts = (doc or {}).get("counts") or {}
        lines.append(
            f"| `{_cell(subject)}` | {command} | {verdict.get(code, f'exit {code}')} | "
            f"{counts.get('error', '')} | {counts.get('warning', '')} |"
        )
    return "\n".join(lines) + "\n"


def _read_json(path: Path) -> dict[str, Any] | None:
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return doc if isinstance(doc, dict) else None


def _say(level: str, message: str) -> None:
    print(annotation(level, message, title="dflash2-ckpt"), flush=True)


def _write(path: str, text: str, paths: list[str]) -> bool:
    """A report file of the action, written as every report file is (never through a link, never over a
    file of a drafter checked, atomically); refused -> an error annotation and False."""
    try:
        dest = destination(path, reading=files_read(paths))
        dest.parent.mkdir(parents=True, exist_ok=True)
        write_files([(dest, lambda f: f.write(text))])
    except (Dflash2Error, OSError) as e:
        _say("error", f"not written: {e}")
        return False
    return True


def _set_outputs(file: str, values: Mapping[str, str]) -> None:
    """Step outputs in the heredoc form (name<<DELIMITER ... DELIMITER), as actions/toolkit writes them: a
    newline in a value cannot start another output."""
    with open(file, "a", encoding="utf-8") as f:
        for name, value in values.items():
            delimiter = f"ghadelimiter_{uuid.uuid4()}"
            while delimiter in value:
                delimiter = f"ghadelimiter_{uuid.uuid4()}"
            f.write(f"{name}<<{delimiter}\n{value}\n{delimiter}\n")


def counts(doc: Mapping[str, Any] | None) -> dict[str, int]:
    """Findings by severity in one run's report: verify's `counts`; compat's reasons per engine judged."""
    if not doc:
        return {}
    if isinstance(doc.get("counts"), dict):
        return {k: v for k, v in doc["counts"].items() if isinstance(v, int)}
    out: dict[str, int] = {}
    for engine in doc.get("engines") or []:
        for reason in engine.get("reasons") or []:
            out[reason.get("severity", "info")] = out.get(reason.get("severity", "info"), 0) + 1
    return out


def _settings_engines(env: Mapping[str, str], path: str) -> bool:
    """Whether the settings (the `config` input, else the workspace's pyproject.toml) name engines for
    this path: compat then judges those, as asked for. A settings file that cannot be read asks for none
    here; the compat run itself reports it."""
    from .settings import resolve  # lazy: cli.settings loads only on this path

    try:
        return bool(resolve(_input(env, "config") or None, subject=path).values.get("engines"))
    except (Dflash2Error, OSError):
        return False


def _compat(
    path: str, i: int, tmp: str, env: Mapping[str, str], child_env: Mapping[str, str]
) -> tuple[int, dict[str, Any] | None, bool]:
    """compat for the engines the `engines` input (else the settings' `engines`) names, its annotations on
    the run. Without either no engine was asked for: every profile is judged into the JSON and the summary, and the verdicts show as
    one notice, never as errors of engines the workflow does not use on a run that passes (exit 0; a run
    where no engine loads it, or that could not run, shows its annotations). Returns (exit code, JSON
    report, whether its annotations were shown)."""
    cj = Path(tmp, f"{i}.compat.json")
    engines = [f"--engine={e}" for e in _words(_input(env, "engines"))]
    asked = bool(engines) or _settings_engines(env, path)
    extra = [f"--{name}={v}" for name in ("target", "revision", "config") if (v := _input(env, name))]
    held = Path(tmp, f"{i}.compat.github")
    shown = ["--format", "github"] if asked else [f"--output=github={held}"]
    code = _cli(["compat", *engines, *extra, *shown, f"--output=json={cj}", "--", path], child_env)
    doc = _read_json(cj)
    if not asked and code != 0:
        if held.is_file():
            print(held.read_text(encoding="utf-8"), end="", flush=True)  # already escaped by the CLI
        return code, doc, True
    if not asked and doc is not None:
        verdicts = ", ".join(
            f"{e.get('engine')} {e.get('versions')}: {e.get('verdict')}" for e in doc.get("engines") or []
        )
        _say(
            "notice",
            f"compat {path}: {verdicts} (name the engines you serve with in the `engines` input to "
            "have their verdicts annotated)",
        )
    return code, doc, asked


def run(env: Mapping[str, str]) -> int:
    paths = _lines(_input(env, "paths"))
    if not paths:
        _say("error", "the `paths` input is empty: name drafter directories or Hub repos, one per line")
        return 2
    sarif_file = _input(env, "sarif-file", "dflash2-ckpt.sarif")
    json_file = _input(env, "json-file")
    compat = _input(env, "compat").lower() in TRUE
    child_env = dict(env)
    if token := _input(env, "token"):
        child_env["HF_TOKEN"] = token
    worst = 0
    rows: list[tuple[str, str, int, dict[str, Any] | None]] = []
    documents: list[dict[str, Any]] = []
    annotated: list[dict[str, Any] | None] = []  # the reports whose findings the run shows: counted
    with tempfile.TemporaryDirectory(prefix="dflash2-ckpt-action-") as tmp:
        sarifs: list[Path] = []
        for i, path in enumerate(paths):
            s, j = Path(tmp, f"{i}.sarif"), Path(tmp, f"{i}.json")
            code = _cli(
                [
                    "verify",
                    *_flags(env),
                    "--format",
                    "github",
                    f"--output=sarif={s}",
                    f"--output=json={j}",
                    "--",
                    path,
                ],
                child_env,
            )
            sarifs.append(s)
            doc = _read_json(j)
            annotated.append(doc)
            rows.append((path, "verify", code, doc))
            documents.append({"path": path, "command": "verify", "exit_code": code, "report": doc})
            worst = max(worst, code)
            if compat:
                code, doc, shown = _compat(path, i, tmp, env, child_env)
                if shown:
                    annotated.append(doc)
                rows.append((path, "compat", code, doc))
                documents.append({"path": path, "command": "compat", "exit_code": code, "report": doc})
                worst = max(worst, code)
        if not _write(sarif_file, json.dumps(merge_sarif(sarifs), indent=2) + "\n", paths):
            worst = max(worst, 2)
    if json_file and not _write(
        json_file, json.dumps({"exit_code": worst, "runs": documents}, indent=2) + "\n", paths
    ):
        worst = max(worst, 2)
    if out := env.get("GITHUB_OUTPUT"):
        total: dict[str, int] = {}
        for doc in annotated:
            for severity, n in counts(doc).items():
                total[severity] = total.get(severity, 0) + n
        _set_outputs(
            out,
            {
                "exit-code": str(worst),
                "sarif-file": sarif_file,
                "findings": str(sum(total.values())),
                "errors": str(total.get("error", 0)),
                "warnings": str(total.get("warning", 0)),
                "json-file": json_file,
            },
        )
    if summary := env.get("GITHUB_STEP_SUMMARY"):
        with open(summary, "a", encoding="utf-8") as f:
            f.write(_summary(rows))
    fail_on = _input(env, "fail-on", "error").lower()
    return 0 if fail_on == "never" else worst


def main() -> None:
    sys.exit(run(os.environ))


if __name__ == "__main__":
    main()
