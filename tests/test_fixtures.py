"""Acceptance: the CLI over every committed fixture, with the exact finding each one was built to produce."""

from __future__ import annotations

import filecmp
import json

import pytest

from _kit.cli import run_json
from conftest import FIXTURES

MANIFEST = json.loads((FIXTURES / "broken" / "MANIFEST.json").read_text())
# cases only `diff` against a reference can find are tested in tests/quant/test_diff.py
VERIFY_CASES = sorted(n for n, w in MANIFEST.items() if "reference" not in w)
GOOD = sorted(p.name for p in (FIXTURES / "good").iterdir())


@pytest.mark.parametrize("name", GOOD)
def test_good_fixture_passes_clean(name: str) -> None:
    # the assistant export records no vocab_size: its target gives it (without one, DF120 warns)
    target = ["--target", str(FIXTURES / "targets" / "tiny-target")] if name == "assistant-v1" else []
    code, report = run_json("verify", str(FIXTURES / "good" / name), "--strict", *target)
    assert code == 0, report["findings"]
    # the assistant export is clean too, its notes say where its vocabulary came from and which engines
    # load its encoder.* names; a reduced-vocabulary drafter's note names its own head
    notes = {"assistant-v1": ["DF120", "DF305"], "flat-v1-reduced-vocab": ["DF212"]}
    assert [f["code"] for f in report["findings"]] == notes.get(name, [])


@pytest.mark.parametrize("name", VERIFY_CASES)
def test_broken_fixture_fails_with_its_code_only(name: str) -> None:
    want = MANIFEST[name]
    args = [str(FIXTURES / "broken" / name)] + (["--strict"] if want["strict"] else [])
    code, report = run_json("verify", *args)
    assert code == 1
    codes = {f["code"] for f in report["findings"]}
    assert want["code"] in codes
    others = {f["code"] for f in report["findings"] if f["severity"] in ("error", "warning")} - {want["code"]}
    assert not others, report["findings"]


@pytest.mark.parametrize("name", sorted(n for n, w in MANIFEST.items() if w["strict"]))
def test_warning_fixtures_pass_without_strict(name: str) -> None:
    code, _ = run_json("verify", str(FIXTURES / "broken" / name))
    assert code == 0


def test_ignore_makes_a_broken_fixture_pass() -> None:
    code, report = run_json("verify", str(FIXTURES / "broken" / "fc-wrong-shape"), "--ignore", "DF203")
    assert code == 0 and report["findings"] == []


def test_fixtures_rebuild_byte_identical(tmp_path) -> None:
    import importlib.util

    spec = importlib.util.spec_from_file_location("build", FIXTURES / "build.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    mod.main(tmp_path)
    for sub in ("good", "broken", "targets", "gguf", "quantized"):
        cmp = filecmp.dircmp(FIXTURES / sub, tmp_path / sub)
        stack = [cmp]
        while stack:
            c = stack.pop()
            assert not c.left_only and not c.right_only, (c.left, c.left_only, c.right_only)
            _, mismatch, errors = filecmp.cmpfiles(c.left, c.right, c.common_files, shallow=False)
            assert not mismatch and not errors, (c.left, mismatch, errors)
            stack += c.subdirs.values()
