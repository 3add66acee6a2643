"""The one progress helper (cli/progress.py): a bar on a terminal, plain lines a log keeps off one (none for
a machine format), labels escaped; audit and diff report through it."""

from __future__ import annotations

import io
import sys

import pytest

from _kit.cli import invoke
from conftest import FIXTURES
from dflash2_ckpt.cli.progress import progress


def test_off_a_terminal_a_line_at_each_tenth_and_the_end(monkeypatch: pytest.MonkeyPatch) -> None:
    pipe = io.StringIO()
    monkeypatch.setattr(sys, "stderr", pipe)
    for var in ("FORCE_TERMINAL", "TTY_COMPATIBLE", "FORCE_COLOR"):
        monkeypatch.delenv(var, raising=False)
    with progress("diff") as update:
        update(0, None, "starting", "")
        for i in range(1, 21):
            update(i, 20, f"t{i}\x1b[2J", "")
    lines = pipe.getvalue().splitlines()
    assert lines[0] == "diff: 1/20 t1\\x1b[2J" and lines[1].startswith("diff: 2/20 ")
    assert lines[-1] == "diff: 20/20 t20\\x1b[2J" and len(lines) == 11
    quiet = io.StringIO()
    monkeypatch.setattr(sys, "stderr", quiet)
    with progress("diff", fmt="json") as update:
        update(20, 20, "t", "")
    assert quiet.getvalue() == ""


def test_audit_text_reports_progress_on_stderr_and_json_keeps_it_clean() -> None:
    good = [str(FIXTURES / "good" / n) for n in ("nested-v2", "flat-v1")]
    r = invoke("audit", *good)
    assert "audit: 2/2" in r.stderr and "audit:" not in r.stdout
    j = invoke("audit", *good, "--format", "json")
    assert j.stderr == ""


def test_verify_scan_reports_each_tenth_of_the_tensors_it_reads() -> None:
    good = str(FIXTURES / "good" / "nested-v2")
    r = invoke("verify", good, "--scan")
    lines = [ln for ln in r.stderr.splitlines() if ln.startswith("scan: ")]
    assert lines and lines[-1].startswith("scan: 36/36 ") and len(lines) <= 11
    assert invoke("verify", good, "--scan", "--format", "json").stderr == ""
    assert "scan:" not in invoke("verify", good).stderr  # no scan, nothing to show


def test_convert_reports_each_shard_it_writes(tmp_path) -> None:  # type: ignore[no-untyped-def]
    r = invoke("convert", str(FIXTURES / "good" / "flat-v1"), "--to", "nested", "-o", str(tmp_path / "out"))
    assert r.exit_code == 0, r.output
    assert "convert: 1/1 model.safetensors" in r.stderr
