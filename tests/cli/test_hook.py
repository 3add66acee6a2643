"""`hook config|verify`: one report per checkpoint directory, in every format."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import jsonschema

from _kit.cli import one_json, run
from conftest import FIXTURES
from dflash2_ckpt.report import render
from dflash2_ckpt.usecases.hooks import run_hook

FILES = [
    str(FIXTURES / "good" / "nested-v2" / "config.json"),
    str(FIXTURES / "broken" / "fc-wrong-shape" / "model.safetensors"),
    str(FIXTURES / "broken" / "fc-wrong-shape" / "config.json"),
    str(FIXTURES / "broken" / "mask-id-out-of-vocab" / "config.json"),
]
SCHEMA = json.loads((Path(__file__).parents[1] / "report" / "sarif-schema-2.1.0.json").read_text())


def test_json_lists_each_directory_once() -> None:
    code, out, _ = run("hook", "verify", *FILES, "--format", "json")
    doc = one_json(out)
    assert code == 1 and doc["passed"] is False and doc["level"] == "headers"
    assert [Path(c["subject"]).name for c in doc["checked"]] == [
        "nested-v2",
        "fc-wrong-shape",
        "mask-id-out-of-vocab",
    ]


def test_sarif_places_each_finding_in_its_own_directory() -> None:
    result = run_hook(FILES, "headers")
    out = io.StringIO()
    render(result, "sarif", out)
    doc = json.loads(out.getvalue())
    jsonschema.validate(doc, SCHEMA)
    uris = sorted(
        r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in doc["runs"][0]["results"]
    )
    assert [u.split("/")[-2] for u in uris] == ["fc-wrong-shape", "mask-id-out-of-vocab"]


def test_github_annotations_and_text_stay_quiet_for_clean_directories() -> None:
    code, out, _ = run("hook", "verify", *FILES, "--format", "github")
    assert code == 1 and len(re.findall(r"^::error file=", out, re.M)) == 2
    code, out, _ = run("hook", "verify", *FILES)
    assert code == 1 and out.count("FAILED") == 2 and "nested-v2" not in out
