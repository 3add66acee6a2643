"""SARIF output validates against the OASIS SARIF 2.1.0 schema and sits findings on their config line."""

from __future__ import annotations

import io
import json
from pathlib import Path

import jsonschema
import pytest

from conftest import FIXTURES
from dflash2_ckpt.report import render, render_error
from dflash2_ckpt.usecases.verify import verify

SCHEMA = json.loads((Path(__file__).parent / "sarif-schema-2.1.0.json").read_text())
VALIDATOR = jsonschema.Draft7Validator(SCHEMA, format_checker=jsonschema.FormatChecker())
CASES = [
    "good/nested-v2",
    "broken/fc-wrong-shape",
    "broken/mask-id-out-of-vocab",
    "broken/tensor-missing",
    "broken/header-truncated",
    "broken/config-not-json",
    "broken/causality-unstated",
]


def sarif_of(report: object) -> dict:
    out = io.StringIO()
    render(report, "sarif", out)  # type: ignore[arg-type]
    return json.loads(out.getvalue())


def test_schema_is_the_real_one() -> None:
    assert SCHEMA["$id"].endswith("sarif-schema-2.1.0.json") and "run" in SCHEMA["definitions"]
    assert list(VALIDATOR.iter_errors({"version": "2.1.0"}))  # runs is required: the schema bites


@pytest.mark.parametrize("name", CASES)
def test_verify_sarif_validates(name: str) -> None:
    report = verify(FIXTURES / name)
    doc = sarif_of(report)
    errors = [e.message for e in VALIDATOR.iter_errors(doc)]
    assert errors == []
    [run] = doc["runs"]
    rules = run["tool"]["driver"]["rules"]
    # the rules of this log are the codes its results use, each once, in code order (not the whole registry)
    assert [r["id"] for r in rules] == sorted({f.code for f in report.findings})
    assert [r["ruleId"] for r in run["results"]] == [f.code for f in report.findings]
    for r in run["results"]:
        assert rules[r["ruleIndex"]]["id"] == r["ruleId"]


def test_a_config_finding_sits_on_its_key_line(tmp_path: Path) -> None:
    report = verify(FIXTURES / "broken" / "mask-id-out-of-vocab")
    [f] = [f for f in report.findings if f.code == "DF106"]
    [res] = [r for r in sarif_of(report)["runs"][0]["results"] if r["ruleId"] == "DF106"]
    loc = res["locations"][0]["physicalLocation"]
    assert loc["artifactLocation"]["uri"].endswith("mask-id-out-of-vocab/config.json")
    lines = (FIXTURES / "broken" / "mask-id-out-of-vocab" / "config.json").read_text().splitlines()
    key = f.field.split(".")[-1]
    region = loc["region"]
    line = lines[region["startLine"] - 1]
    # the columns span the key as written, its quotes included (1-based, endColumn after it; ASCII here)
    assert line[region["startColumn"] - 1 : region["endColumn"] - 1] == f'"{key}"'


def test_columns_count_utf16_code_units(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A key after non-ASCII text on its line: columns in UTF-16 code units, SARIF's default columnKind."""
    import shutil

    monkeypatch.chdir(tmp_path)
    shutil.copytree(FIXTURES / "broken" / "mask-id-out-of-vocab", "d")
    text = Path("d/config.json").read_text(encoding="utf-8")
    # an astral character (two UTF-16 code units) and a BMP one before the key, on its line
    prefix = '    "_note": "\U0001d11e\u00e9", '
    text = text.replace('    "mask_token_id"', prefix + '"mask_token_id"', 1)
    Path("d/config.json").write_text(text, encoding="utf-8")
    [res] = [r for r in sarif_of(verify(Path("d")))["runs"][0]["results"] if r["ruleId"] == "DF106"]
    region = res["locations"][0]["physicalLocation"]["region"]
    assert region["startColumn"] == len(prefix) + 2  # 1-based, and the astral character counts twice
    assert region["endColumn"] - region["startColumn"] == len('"mask_token_id"')


def test_error_document_is_valid_sarif_too() -> None:
    out = io.StringIO()
    render_error(
        {"type": "SourceError", "message": "no such file", "hint": "give a path", "path": "x"},
        "sarif",
        out,
        io.StringIO(),
    )
    doc = json.loads(out.getvalue())
    assert list(VALIDATOR.iter_errors(doc)) == []
    inv = doc["runs"][0]["invocations"][0]
    assert (
        inv["executionSuccessful"] is False
        and "no such file" in inv["toolExecutionNotifications"][0]["message"]["text"]
    )


CODES_PAGE = (Path(__file__).resolve().parents[2] / "docs" / "codes.md").read_text(encoding="utf-8")


def test_rules_carry_help_for_code_scanning() -> None:
    from urllib.parse import urlsplit

    from dflash2_ckpt.version import package_version

    rules = sarif_of(verify(FIXTURES / "broken" / "causality-unstated"))["runs"][0]["tool"]["driver"]["rules"]
    assert rules
    for rule in rules:
        url = urlsplit(rule["helpUri"])
        # each rule links to its own row of docs/codes.md as released with this version (its tag), which
        # carries that anchor
        assert url.scheme == "https" and url.path.endswith(f"/blob/v{package_version()}/docs/codes.md")
        assert url.fragment == rule["id"].lower()
        assert f'<a id="{url.fragment}"></a>{rule["id"]} |' in CODES_PAGE
        assert rule["fullDescription"]["text"].startswith(rule["shortDescription"]["text"])
        assert rule["id"] in rule["help"]["markdown"]
        assert "**What breaks:**" in rule["help"]["markdown"] and "**Fix:**" in rule["help"]["markdown"]


def test_fingerprints_survive_moved_lines(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The same finding after config.json's lines moved: another startLine, the same partialFingerprints."""
    import shutil

    monkeypatch.chdir(tmp_path)
    shutil.copytree(FIXTURES / "broken" / "mask-id-out-of-vocab", "d")
    before = sarif_of(verify(Path("d")))["runs"][0]["results"]
    cfg = json.loads(Path("d/config.json").read_text())
    Path("d/config.json").write_text(json.dumps({"_comment": "moved", **cfg}, indent=4))
    after = sarif_of(verify(Path("d")))["runs"][0]["results"]
    pick = lambda rs: next(r for r in rs if r["ruleId"] == "DF106")  # noqa: E731
    b, a = pick(before), pick(after)
    line = lambda r: r["locations"][0]["physicalLocation"]["region"]["startLine"]  # noqa: E731
    assert line(b) != line(a)
    assert b["partialFingerprints"] == a["partialFingerprints"] and b["partialFingerprints"]
    assert len({json.dumps(r["partialFingerprints"]) for r in before}) == len(before)  # distinct per finding


def test_a_fixable_config_finding_carries_its_fix(tmp_path: Path) -> None:
    """DF401's fix (the resolved causality written explicitly) as a SARIF replacement of config.json that
    `verify --fix` would write; the log still validates."""
    import shutil

    from _kit.cli import invoke

    src = tmp_path / "d"
    shutil.copytree(Path(__file__).parents[2] / "fixtures" / "broken" / "engines-split-causality", src)
    doc = json.loads(invoke("verify", str(src), "--format", "sarif").stdout)
    assert not list(VALIDATOR.iter_errors(doc))
    fixed = [r for r in doc["runs"][0]["results"] if r.get("fixes")]
    assert fixed and {r["ruleId"] for r in fixed} == {"DF401"}
    [change] = fixed[0]["fixes"][0]["artifactChanges"]
    assert change["artifactLocation"]["uri"].endswith("config.json")
    [rep] = change["replacements"]
    old = (src / "config.json").read_text()
    assert rep["deletedRegion"] == {"charOffset": 0, "charLength": len(old)}
    assert invoke("verify", str(src), "--fix").exit_code in (0, 1)
    assert rep["insertedContent"]["text"] == (src / "config.json").read_text()  # what --fix wrote
