"""Strings no encoder writes (lone surrogates: JSON's "\\ud800", a non-UTF-8 file name) in a config or a
report: a finding, printed in every format, never a crash on the way out."""

from __future__ import annotations

import dataclasses
import io
import json
import shutil
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from _kit.cli import invoke
from conftest import FIXTURES
from dflash2_ckpt.report import FORMATS, render
from dflash2_ckpt.usecases.verify import verify

GOOD = FIXTURES / "good" / "nested-v2"


def _drafter(tmp: Path, edit: str) -> Path:
    d = tmp / "d"
    shutil.copytree(GOOD, d)
    cfg = json.loads((d / "config.json").read_text())
    if edit == "top":
        cfg["k\ud800"] = 1
    else:
        cfg["dflash_config"]["k\ud800"] = 1
    (d / "config.json").write_text(json.dumps(cfg))  # the key as the escape "k\ud800", as JSON holds it
    return d


@pytest.mark.parametrize("where", ["top", "dflash_config"])
@pytest.mark.parametrize("fmt", sorted(FORMATS))
def test_a_surrogate_key_is_df101_in_every_format(tmp_path: Path, where: str, fmt: str) -> None:
    """It used to pass the fast parse as DF116 only: `--format json` said passed, the others crashed (exit 3)."""
    d = _drafter(tmp_path, where)
    out = tmp_path / "out.json"
    r = invoke("verify", str(d), "--format", fmt, "--output", f"json={out}")
    assert r.exit_code == 1, r.output
    assert "DF101" in r.stdout and "internal error" not in r.output
    doc = json.loads(out.read_text())
    assert doc["passed"] is False
    assert [f["code"] for f in doc["findings"]] == ["DF101"]
    assert "unable to parse raw data as a unicode string" in doc["findings"][0]["message"]


# any text, lone surrogates included
ANY_TEXT = st.lists(st.one_of(st.characters(categories=["Cs"]), st.characters()), max_size=12).map(
    "".join
)  # st.text never yields surrogates


@settings(max_examples=60, deadline=None)
@given(ANY_TEXT, ANY_TEXT)
def test_every_renderer_writes_any_string_a_report_can_hold(message: str, field: str) -> None:
    report = verify(FIXTURES / "broken" / "causality-unstated")
    f = report.findings[0]
    hostile = dataclasses.replace(f, message=message + f.message, field=field or f.field)
    report = dataclasses.replace(report, findings=(hostile, *report.findings[1:]))
    for fmt in FORMATS:
        stream = io.TextIOWrapper(io.BytesIO(), encoding="utf-8", errors="strict")
        render(report, fmt, stream)
        stream.flush()
