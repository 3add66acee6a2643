"""One grammar across the commands, as a user meets it: whole summaries in --help, the dialect names inspect
prints accepted by schema, -o/--output-dir and --output FORMAT=FILE meaning one thing each (the older
spellings still working, with a note), a mistyped local path named as one, push --dry-run without the Hub."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import click
import pytest

from _kit.cli import invoke, invoke_cli, run, run_output
from _kit.fakehub import FakeHub
from conftest import FIXTURES
from dflash2_ckpt.cli import COMMANDS, main

GOOD = FIXTURES / "good"
COLUMNS = {"COLUMNS": "80"}


def test_help_gives_every_command_its_whole_summary_on_one_line() -> None:
    res = invoke("--help", env=COLUMNS)
    rows = res.output.split("Commands:\n", 1)[1].splitlines()
    assert [r.split()[0] for r in rows if r.strip()] == COMMANDS  # one row each, nothing wrapped
    ctx = click.Context(main)
    for row in rows:
        name, summary = row.split(None, 1)
        full = main.get_command(ctx, name).get_short_help_str(limit=10_000)  # type: ignore[union-attr]
        assert not summary.endswith("...") and summary == full, (name, summary, full)
        assert len(row) <= 80


@pytest.mark.parametrize("name", ["nested-v2", "nested-v1", "flat-v2", "flat-v1", "assistant-v1"])
def test_schema_takes_each_dialect_as_inspect_names_it(name: str) -> None:
    summary = json.loads(invoke("inspect", str(GOOD / name), "--format", "json").stdout)["summary"]
    assert f"{summary['dialect']}-{summary['version']}" == name  # what inspect calls it
    code, out, _ = run("schema", "--dialect", name)
    assert code == 0 and json.loads(out)["$id"].endswith(f"/schemas/{name}.schema.json")
    assert run("schema", "--dialect", f"{name}.schema.json")[1] == out  # the file name still works


def test_schema_says_what_a_dialect_name_lacks() -> None:
    code, out = run_output("schema", "--dialect", "nested")
    assert code == 2 and "nested-v1, nested-v2" in out
    code, out = run_output("schema", "--dialect", "gguf")
    assert code == 2 and "no JSON Schema" in out and "GGUF metadata" in out
    code, out = run_output("schema", "--dialect", "eagle3")
    assert code == 2 and "nested-v2, nested-v1, flat-v2, flat-v1, assistant-v1" in out


def quiet(stderr: str) -> bool:
    """Nothing on stderr but the progress lines text output prints off a terminal."""
    return all(line.startswith(("convert: ", "audit: ")) for line in stderr.splitlines())


def test_output_dir_is_where_convert_writes_and_output_is_a_report_file(tmp_path: Path) -> None:
    common = ["--to", "flat", "--verifier-name", "a/b", "--verifier-arch", "Qwen3ForCausalLM"]
    res = invoke("convert", str(GOOD / "nested-v2"), "--output-dir", str(tmp_path / "a"), *common)
    assert res.exit_code == 0 and (tmp_path / "a" / "config.json").is_file() and quiet(res.stderr)
    res = invoke("convert", str(GOOD / "nested-v2"), "-o", str(tmp_path / "b"), *common)
    assert res.exit_code == 0 and (tmp_path / "b" / "config.json").is_file() and quiet(res.stderr)
    res = invoke("convert", str(GOOD / "nested-v2"), "--output", str(tmp_path / "c"), *common)
    assert res.exit_code == 0 and (tmp_path / "c" / "config.json").is_file()  # the older spelling works
    assert "note: convert's --output is now -o/--output-dir" in res.stderr
    helped = invoke("convert", "--help", env=COLUMNS).output
    assert "-o, --output-dir" in helped and not re.search(r"--output\b(?!-)", helped)


def test_audit_writes_reports_with_output_and_notes_its_older_o(tmp_path: Path) -> None:
    res = invoke("audit", str(GOOD / "nested-v2"), "--output", f"json={tmp_path / 'a.json'}")
    assert res.exit_code == 0 and json.loads((tmp_path / "a.json").read_text()) and quiet(res.stderr)
    res = invoke("audit", str(GOOD / "nested-v2"), "--format", "json", "-o", str(tmp_path / "b.json"))
    assert res.exit_code == 0 and json.loads((tmp_path / "b.json").read_text()) and res.stdout == ""
    assert "note: audit's -o is now --output FORMAT=FILE" in res.stderr
    helped = invoke("audit", "--help", env=COLUMNS).output
    assert "--output FORMAT=FILE" in helped and "-o, --output" not in helped


def test_a_mistyped_local_path_is_named_before_any_hub_request(
    hub: FakeHub, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "fixtures").mkdir()
    code, out = run_output("verify", "fixtures/nested-v2")
    assert code == 3 and "no such file or directory" in out and "fixtures/ is here" in out, out
    assert "the Hub was not asked" in out and hub.requests() == []


def test_a_bare_name_that_is_neither_says_both_were_tried(
    hub: FakeHub, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, offline: None
) -> None:
    monkeypatch.chdir(tmp_path)
    code, out = run_output("verify", "fixture/nested-v2")
    first = out.splitlines()[0]
    assert code == 3 and "no such local directory, and as a Hub repo:" in first and "HF_HUB_OFFLINE" in first
    assert "if you meant a local directory, check its path" in out


def test_push_dry_run_previews_offline_and_says_what_it_could_not_check(
    hub: FakeHub, ckpts: dict[str, Path], tmp_path: Path, offline: None
) -> None:
    drafter = Path(shutil.copytree(ckpts["tiny"], tmp_path / "drafter"))
    code, out = run_output("push", str(drafter), "org/new", "--dry-run")
    assert code == 0 and hub.requests() == [], out
    assert "upload    model.safetensors" in out and "upload    README.md" in out
    assert "+++ local/README.md" in out  # the card it would write, in full
    assert "not checked: anything on the Hub (HF_HUB_OFFLINE is on)" in out
    assert "not checked: whether org/new exists" in out and "not checked: the token's write access" in out
    assert out.rstrip().endswith("nothing was uploaded; nothing was compared with the Hub")
    assert not (drafter / "README.md").exists()
    code, out, _ = run("push", str(drafter), "org/new", "--dry-run", "--format", "json")
    doc = json.loads(out)
    assert code == 0 and doc["dry_run"] and not doc["created"] and len(doc["unchecked"]) == 5
    assert "model.safetensors" in doc["plan"]["upload"]


def test_push_without_the_hub_gives_one_hint_that_agrees_with_the_dry_run(
    hub: FakeHub, ckpts: dict[str, Path], offline: None
) -> None:
    code, out = run_output("push", str(ckpts["tiny"]), "org/new", "--no-card", "--token", "hf_granted")
    assert code == 3 and hub.requests() == []
    assert "unset HF_HUB_OFFLINE to upload; `push --dry-run` previews without the Hub" in out
    assert "set HF_HUB_OFFLINE=1" not in out


def test_schema_completes_the_dialect_names() -> None:
    env = {
        "_DFLASH2_CKPT_COMPLETE": "bash_complete",
        "COMP_WORDS": "dflash2-ckpt schema --dialect fl",
        "COMP_CWORD": "3",
    }
    res = invoke_cli(main, [], prog_name="dflash2-ckpt", env=env)
    assert res.output.splitlines() == ["plain,flat-v2", "plain,flat-v1"]
