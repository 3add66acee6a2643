"""Report files (--output, audit's -o): atomic, never through a symbolic link unless asked, never over a
file of the checkpoint being read, and never a good report replaced by an error document."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from _kit.cli import invoke
from conftest import FIXTURES, ROOT

GOOD = FIXTURES / "good" / "nested-v2"


def _drafter(tmp: Path) -> Path:
    d = tmp / "d"
    shutil.copytree(GOOD, d)
    return d


def test_a_link_is_not_written_through_unless_asked(tmp_path: Path) -> None:
    victim = tmp_path / "victim"
    victim.write_text("keep me\n")
    link = tmp_path / "dflash2-ckpt.sarif"
    link.symlink_to(victim)
    r = invoke("verify", str(GOOD), "--output", f"sarif={link}")
    assert r.exit_code == 2 and "symbolic link" in r.output and "--output-follow-symlinks" in r.output
    assert victim.read_text() == "keep me\n" and link.is_symlink()
    r = invoke("verify", str(GOOD), "--output", f"sarif={link}", "--output-follow-symlinks")
    assert r.exit_code == 0
    assert json.loads(victim.read_text())["version"] == "2.1.0" and link.is_symlink()


def test_a_linked_folder_of_a_relative_path_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    work = tmp_path / "work"
    work.mkdir()
    (work / "reports").symlink_to(elsewhere)
    monkeypatch.chdir(work)
    r = invoke("verify", str(GOOD), "--output", "json=reports/r.json")
    assert r.exit_code == 2 and "has a folder, reports, that is a symbolic link" in r.output
    assert list(elsewhere.iterdir()) == []


def test_a_file_of_the_checkpoint_is_never_overwritten(tmp_path: Path) -> None:
    d = _drafter(tmp_path)
    before = {p.name: p.read_bytes() for p in d.iterdir()}
    for dest in (d / "config.json", d / ".." / "d" / "model.safetensors"):
        for extra in ((), ("--output-follow-symlinks",)):
            r = invoke("verify", str(d), "--output", f"json={dest}", *extra)
            assert r.exit_code == 2 and "a file this command reads" in r.output, r.output
    link = tmp_path / "r.json"
    link.symlink_to(d / "config.json")
    assert invoke("verify", str(d), "--output", f"json={link}", "--output-follow-symlinks").exit_code == 2
    # a usage error click reports (an unknown option) does not write its error document there either
    assert invoke("verify", str(d), "--bogus", "--output", f"json={d / 'config.json'}").exit_code == 2
    assert {p.name: p.read_bytes() for p in d.iterdir()} == before
    # a new file beside the checkpoint is fine
    assert invoke("verify", str(d), "--output", f"json={d / 'report.json'}").exit_code == 0


def test_a_refused_output_leaves_no_partial_file_and_no_temporary(tmp_path: Path) -> None:
    (tmp_path / "adir").mkdir()
    r = invoke(
        "verify",
        str(GOOD),
        "--output",
        f"json={tmp_path / 'a.json'}",
        "--output",
        f"sarif={tmp_path / 'adir'}",
    )
    assert r.exit_code == 2 and "is a directory" in r.output
    # nothing was half written: a.json holds the run's error document, whole; no temporary file is left
    assert json.loads((tmp_path / "a.json").read_text())["error"]["type"] == "UnsafeOutputError"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.json", "adir"]


def test_a_written_report_is_not_replaced_by_an_error_document(tmp_path: Path) -> None:
    """stdout fails after the --output file was written (a full disk): the file keeps the complete report."""
    out = tmp_path / "b.json"
    with open("/dev/full", "w") as full:
        subprocess.run(
            [
                sys.executable,
                "-m",
                "dflash2_ckpt",
                "verify",
                str(GOOD),
                "--format",
                "sarif",
                "--output",
                f"json={out}",
            ],
            stdout=full,
            stderr=subprocess.DEVNULL,
            cwd=ROOT,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
            timeout=120,
        )
    assert json.loads(out.read_text())["passed"] is True


def test_audit_output_file_is_checked_too(tmp_path: Path) -> None:
    d = _drafter(tmp_path)
    before = (d / "config.json").read_bytes()
    r = invoke("audit", str(d), "-o", str(d / "config.json"))
    assert r.exit_code == 2 and "a file this command reads" in r.output
    assert (d / "config.json").read_bytes() == before


def test_a_file_the_command_reads_is_never_overwritten(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = tmp_path / "ci.toml"
    settings.write_text("[tool.dflash2-ckpt]\nstrict = false\n")
    r = invoke("verify", str(GOOD), "--config", str(settings), "--output", f"json={settings}")
    assert r.exit_code == 2 and "a file this command reads" in r.output
    assert settings.read_text() == "[tool.dflash2-ckpt]\nstrict = false\n"
    # a file that only shares its name with an option's value (--format text) is not an input
    monkeypatch.chdir(tmp_path)
    (tmp_path / "text").write_text("old\n")
    assert invoke("verify", str(GOOD), "--format", "text", "--output", "json=text").exit_code == 0
    assert json.loads((tmp_path / "text").read_text())["passed"] is True


def test_a_stream_is_written_in_place(tmp_path: Path) -> None:
    """/dev/stdout (a link to the process's stdout), /dev/null and a named pipe are streams: written, not replaced."""
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "dflash2_ckpt",
            "verify",
            str(GOOD),
            "--format",
            "github",
            "--output",
            "json=/dev/stdout",
            "--output",
            "sarif=/dev/null",
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout[: proc.stdout.index("\n}\n") + 2])["passed"] is True
    assert Path("/dev/null").is_char_device()
