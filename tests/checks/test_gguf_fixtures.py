"""The committed GGUF fixtures through the CLI: the clean drafter passes --strict with no finding, each
broken file fails with the code fixtures/gguf/MANIFEST.json names."""

from __future__ import annotations

import json

import pytest

from _kit.cli import invoke_cli, run_json
from _kit.gguf import FIXTURES
from dflash2_ckpt.cli import main

GGUF = FIXTURES / "gguf"
MANIFEST = json.loads((GGUF / "MANIFEST.json").read_text())


def test_clean_gguf_passes_strict() -> None:
    code, report = run_json(
        "verify",
        str(GGUF / "drafter-v2.gguf"),
        "--strict",
        "--target",
        str(FIXTURES / "targets" / "tiny-target"),
    )
    assert code == 0 and report["findings"] == [], report["findings"]
    assert report["summary"]["dialect"] == "gguf" and report["summary"]["version"] == "v2"


@pytest.mark.parametrize("name", sorted(MANIFEST))
def test_broken_gguf_fails_with_its_code(name: str) -> None:
    want = MANIFEST[name]
    code, report = run_json("verify", str(GGUF / name), *(["--strict"] if want["strict"] else []))
    assert code == 1
    assert want["code"] in {f["code"] for f in report["findings"]}, report["findings"]
    if want["strict"]:
        assert run_json("verify", str(GGUF / name))[0] == 0


def test_annotations_point_at_the_gguf_file() -> None:
    res = invoke_cli(main, ["verify", str(GGUF / "fork-architecture.gguf"), "--format", "github"])
    first = res.output.splitlines()[0]
    assert first.startswith("::error file=") and "fork-architecture.gguf" in first and "DF901" in first
