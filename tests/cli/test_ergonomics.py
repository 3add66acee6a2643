"""The everyday options a publisher meets first: `codes CODE` (one code's page), `--statistics`,
`--exit-zero`, `--output FORMAT=-` (stdout) and shell completion."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from _kit.cli import invoke, invoke_cli, one_json
from conftest import FIXTURES, ROOT
from dflash2_ckpt.cli import main

GOOD = FIXTURES / "good" / "nested-v2"
MASK = FIXTURES / "broken" / "mask-id-out-of-vocab"
CODES_PAGE = (ROOT / "docs" / "codes.md").read_text(encoding="utf-8")


def _section(code: str) -> str:
    """The code's section of docs/codes.md, as committed (heading to the next heading)."""
    start = CODES_PAGE.index(f"### {code} ")
    return CODES_PAGE[start : CODES_PAGE.index("\n#", start)].strip()


# --- codes CODE -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("typed", ["DF401", "df401"])
def test_codes_prints_one_codes_page(typed: str) -> None:
    r = invoke("codes", typed)
    assert r.exit_code == 0, r.output
    section = _section("DF401")
    body = section.removeprefix("### ")
    assert r.stdout.startswith(body)  # name, severity, description, what breaks, how to fix
    assert "engines-disagree" in r.stdout and "warning" in r.stdout and "**What breaks:**" in r.stdout
    assert "DF402" not in r.stdout  # that one code only
    assert "/docs/codes.md#df401" in r.stdout


def test_codes_json_for_one_code() -> None:
    r = invoke("codes", "DF106", "--format", "json")
    assert r.exit_code == 0
    doc = one_json(r.stdout)
    assert (doc["code"], doc["name"], doc["severity"]) == ("DF106", "mask-id-out-of-vocab", "error")
    section = _section("DF106")
    assert f"- **What breaks:** {doc['breaks']}" in section and f"- **Fix:** {doc['fix']}" in section
    assert doc["help_uri"].endswith("/docs/codes.md#df106")


def test_codes_json_lists_every_code() -> None:
    r = invoke("codes", "--format", "json")
    codes = [c["code"] for c in one_json(r.stdout)]
    assert r.exit_code == 0 and codes == sorted(codes) and "DF401" in codes
    assert len(codes) == CODES_PAGE.count('"></a>DF')  # one per row of the committed table


@pytest.mark.parametrize(
    "typed, near", [("DF41", "DF401"), ("DF4011", "DF401"), ("engines-disagre", "DF401")]
)
def test_an_unknown_code_is_a_usage_error_with_close_matches(typed: str, near: str) -> None:
    r = invoke("codes", typed)
    assert r.exit_code == 2 and r.stdout == ""
    assert f"no finding code {typed!r}" in r.stderr and f"did you mean {near}" in r.stderr


def test_an_unknown_code_under_json_is_one_error_document() -> None:
    r = invoke("codes", "XYZ", "--format", "json")
    assert r.exit_code == 2
    assert one_json(r.stdout)["error"]["exit_code"] == 2


# --- --statistics, --exit-zero -----------------------------------------------------------------------------


def _three_unknown_keys_and_a_bad_mask(tmp: Path) -> Path:
    d = tmp / "d"
    shutil.copytree(GOOD, d)
    cfg = json.loads((d / "config.json").read_text())
    cfg.update({"zz_a": 1, "zz_b": 2, "zz_c": 3})  # DF116 three times (info)
    cfg["dflash_config"]["mask_token_id"] = 10**6  # DF106 once (error)
    (d / "config.json").write_text(json.dumps(cfg, indent=2))
    return d


def test_statistics_counts_each_code_instead_of_listing(tmp_path: Path) -> None:
    d = _three_unknown_keys_and_a_bad_mask(tmp_path)
    r = invoke("verify", str(d), "--statistics")
    assert r.exit_code == 1  # an error finding still fails the run
    assert [line.split() for line in r.stdout.splitlines()] == [
        ["3", "DF116", "info", "unknown-key"],
        ["1", "DF106", "error", "mask-id-out-of-vocab"],
    ]
    r = invoke("verify", str(d), "--statistics", "--format", "json")
    assert one_json(r.stdout) == [
        {"code": "DF116", "name": "unknown-key", "severity": "info", "count": 3},
        {"code": "DF106", "name": "mask-id-out-of-vocab", "severity": "error", "count": 1},
    ]


def test_statistics_leaves_the_output_files_whole(tmp_path: Path) -> None:
    d = _three_unknown_keys_and_a_bad_mask(tmp_path)
    out = tmp_path / "r.json"
    invoke("verify", str(d), "--statistics", "--output", f"json={out}")
    assert sorted(f["code"] for f in json.loads(out.read_text())["findings"]) == ["DF106"] + ["DF116"] * 3


@pytest.mark.parametrize("extra", [["--format", "sarif"], ["--output", "json=-"]])
def test_statistics_with_another_stdout_format_is_a_usage_error(extra: list[str]) -> None:
    r = invoke("verify", str(MASK), "--statistics", *extra)
    assert r.exit_code == 2 and "--statistics" in r.output


def test_hook_statistics_counts_over_every_directory() -> None:
    files = [str(MASK / "config.json"), str(FIXTURES / "broken" / "causality-unstated" / "config.json")]
    r = invoke("hook", "config", *files, "--statistics", "--format", "json")
    counts = {row["code"]: row["count"] for row in one_json(r.stdout)}
    assert counts.get("DF106") == 1 and counts.get("DF403") == 1 and r.exit_code == 1


def test_exit_zero_exits_0_and_still_prints_the_findings() -> None:
    r = invoke("verify", str(MASK), "--exit-zero")
    assert r.exit_code == 0 and "DF106" in r.stdout
    r = invoke("verify", str(MASK), "--exit-zero", "--strict", "--format", "json")
    assert r.exit_code == 0 and "DF106" in {f["code"] for f in one_json(r.stdout)["findings"]}
    assert invoke("hook", "config", str(MASK / "config.json"), "--exit-zero").exit_code == 0


def test_exit_zero_keeps_the_exit_code_of_a_run_that_could_not_run(tmp_path: Path) -> None:
    assert invoke("verify", str(tmp_path / "absent"), "--exit-zero").exit_code == 3


# --- --output FORMAT=- ----------------------------------------------------------------------------------


def test_output_dash_is_stdout_not_a_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    r = invoke("verify", str(MASK), "--output", "sarif=-", "--output", "json=r.json")
    assert r.exit_code == 1
    doc = one_json(r.stdout)  # stdout is that one document, in place of the text
    assert doc["version"] == "2.1.0" and doc["runs"][0]["results"][0]["ruleId"] == "DF106"
    assert not (tmp_path / "-").exists() and sorted(p.name for p in tmp_path.iterdir()) == ["r.json"]
    assert json.loads((tmp_path / "r.json").read_text())["findings"][0]["code"] == "DF106"


def test_output_dash_gets_the_error_document(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    r = invoke("verify", str(tmp_path / "absent"), "--output", "json=-")
    assert r.exit_code == 3 and one_json(r.stdout)["error"]["exit_code"] == 3
    assert "absent" in r.stderr and not (tmp_path / "-").exists()


def test_two_outputs_to_stdout_are_a_usage_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    r = invoke("verify", str(MASK), "--output", "json=-", "--output", "sarif=-")
    assert r.exit_code == 2 and "stdout" in r.stderr and list(tmp_path.iterdir()) == []


def test_compat_output_dash(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    r = invoke("compat", str(GOOD), "--output", "json=-")
    assert r.exit_code == 0 and one_json(r.stdout)["engines"] and list(tmp_path.iterdir()) == []


# --- shell completion ---------------------------------------------------------------------------------------


def _complete(*words: str) -> list[tuple[str, str]]:
    """What bash completion offers after `dflash2-ckpt WORDS` (the last word being completed): (type, value)."""
    env = {
        "_DFLASH2_CKPT_COMPLETE": "bash_complete",
        "COMP_WORDS": " ".join(["dflash2-ckpt", *words]),
        "COMP_CWORD": str(len(words)),
    }
    r = invoke_cli(main, [], env=env, prog_name="dflash2-ckpt")
    return [(kind, value) for kind, _, value in (line.partition(",") for line in r.stdout.splitlines())]


def test_completion_offers_paths_for_a_checkpoint_argument() -> None:
    assert _complete("verify", "fix") == [("file", "fix")]
    assert _complete("compat", "") == [("file", "")]


def test_completion_offers_engine_profiles() -> None:
    from dflash2_ckpt.engines import resolve

    offered = [v for _, v in _complete("verify", "x", "--engine", "vl")]
    assert "vllm" in offered and "vllm@0.28.0" in offered and all(v.startswith("vl") for v in offered)
    for ref in offered:
        resolve(ref)  # each one is accepted by --engine


def test_completion_offers_codes_for_select_ignore_and_codes() -> None:
    assert ("plain", "DF401") in _complete("codes", "DF40")
    offered = [v for _, v in _complete("verify", "x", "--select", "DF2,DF40")]
    assert "DF2,DF401" in offered and all(v.startswith("DF2,DF40") for v in offered)
    assert ("plain", "DF106") in _complete("hook", "config", "--ignore", "df10")
