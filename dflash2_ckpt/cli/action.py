"""What the GitHub Action (action.yml at the repository root) runs: `python -m dflash2_ckpt.cli.action`.

A composite action hands its inputs to a step as environment variables; this reads them (INPUT_PATHS,
INPUT_TARGET, ...), runs `dflash2-ckpt verify` once per path or Hub repo (annotations on stdout, SARIF
and JSON to files through --output, so one run gives all three), optionally `compat`, then merges the
SARIF runs into one file for github/codeql-action/upload-sarif, and writes the step outputs and a job
summary. The exit code is the worst of the runs (0 passed, 1 findings, 2 usage, 3 could not run) unless
`fail-on` is `never`. Not a click command: it drives the CLI in child processes, as a workflow would.
"""
from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any, Mapping

TRUE = ("1", "true", "yes", "on")


def _input(env: Mapping[str, str], name: str, default: str = "") -> str:
    return env.get(f"INPUT_{name.upper().replace('-', '_')}", default).strip() or default


def _words(text: str) -> list[str]:
    """A list input: one item per line or separated by spaces or commas (as `paths: a b` or a YAML block)."""
    return [w for line in text.splitlines() for w in line.replace(",", " ").split() if w]


def _flags(env: Mapping[str, str]) -> list[str]:
    """The options verify shares with the inputs (empty inputs add nothing)."""
    out: list[str] = []
    for name in ("target", "revision", "select", "ignore", "config"):
        if value := _input(env, name):
            out += [f"--{name}", value]
    for engine in _words(_input(env, "engines")):
        out += ["--engine", engine]
    if _input(env, "strict").lower() in TRUE:
        out.append("--strict")
    return out


def _cli(args: list[str], env: Mapping[str, str]) -> int:
    cmd = [sys.executable, "-m", "dflash2_ckpt", *args]
    print(f"::group::dflash2-ckpt {shlex.join(args)}", flush=True)
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


def _summary(rows: list[tuple[str, str, int, dict[str, Any] | None]]) -> str:
    verdict = {0: "passed", 1: "findings", 2: "usage error", 3: "could not run"}
    lines = ["### dflash2-ckpt", "", "| checked | command | result | errors | warnings |", "|---|---|---|---|---|"]
    for subject, command, code, doc in rows:
        counts = (doc or {}).get("counts") or {}
        lines.append(f"| `{subject}` | {command} | {verdict.get(code, f'exit {code}')} | "
                     f"{counts.get('error', '')} | {counts.get('warning', '')} |")
    return "\n".join(lines) + "\n"


def _read_json(path: Path) -> dict[str, Any] | None:
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return doc if isinstance(doc, dict) else None


def run(env: Mapping[str, str]) -> int:
    paths = _words(_input(env, "paths"))
    if not paths:
        print("::error title=dflash2-ckpt::the `paths` input is empty: name drafter directories or Hub repos",
              flush=True)
        return 2
    sarif_file = Path(_input(env, "sarif-file", "dflash2-ckpt.sarif"))
    json_file = _input(env, "json-file")
    compat = _input(env, "compat").lower() in TRUE
    child_env = dict(env)
    if token := _input(env, "token"):
        child_env["HF_TOKEN"] = token
    worst = 0
    rows: list[tuple[str, str, int, dict[str, Any] | None]] = []
    documents: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="dflash2-ckpt-action-") as tmp:
        sarifs: list[Path] = []
        for i, path in enumerate(paths):
            s, j = Path(tmp, f"{i}.sarif"), Path(tmp, f"{i}.json")
            code = _cli(["verify", path, *_flags(env), "--format", "github",
                         "--output", f"sarif={s}", "--output", f"json={j}"], child_env)
            sarifs.append(s)
            doc = _read_json(j)
            rows.append((path, "verify", code, doc))
            documents.append({"path": path, "command": "verify", "exit_code": code, "report": doc})
            worst = max(worst, code)
            if compat:
                cj = Path(tmp, f"{i}.compat.json")
                engines = [x for e in _words(_input(env, "engines")) for x in ("--engine", e)]
                extra = [x for name in ("target", "revision", "config") if (v := _input(env, name))
                         for x in (f"--{name}", v)]
                code = _cli(["compat", path, *engines, *extra, "--format", "github", "--output", f"json={cj}"],
                            child_env)
                doc = _read_json(cj)
                rows.append((path, "compat", code, doc))
                documents.append({"path": path, "command": "compat", "exit_code": code, "report": doc})
                worst = max(worst, code)
        sarif_file.parent.mkdir(parents=True, exist_ok=True)
        sarif_file.write_text(json.dumps(merge_sarif(sarifs), indent=2) + "\n", encoding="utf-8")
    if json_file:
        Path(json_file).write_text(json.dumps({"exit_code": worst, "runs": documents}, indent=2) + "\n",
                                   encoding="utf-8")
    if out := env.get("GITHUB_OUTPUT"):
        with open(out, "a", encoding="utf-8") as f:
            f.write(f"exit-code={worst}\nsarif-file={sarif_file}\n")
    if summary := env.get("GITHUB_STEP_SUMMARY"):
        with open(summary, "a", encoding="utf-8") as f:
            f.write(_summary(rows))
    fail_on = _input(env, "fail-on", "error").lower()
    return 0 if fail_on == "never" else worst


def main() -> None:
    sys.exit(run(os.environ))


if __name__ == "__main__":
    main()
