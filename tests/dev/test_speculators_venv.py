"""scripts/speculators_venv.py --check: the speculators round trip learns from it where speculators lives,
or why it does not (no install yet, or the reason the last one failed), without installing anything."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

from conftest import ROOT

SCRIPT = ROOT / "scripts" / "speculators_venv.py"


def _check(cache: Path) -> tuple[int, dict[str, str]]:
    env = {**os.environ, "DFLASH2_CKPT_ENGINE_CACHE": str(cache)}
    res = subprocess.run(
        [sys.executable, str(SCRIPT), "--check", "--json"],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    return res.returncode, json.loads(res.stdout)


def test_check_names_a_missing_install_and_installs_nothing(tmp_path: Path) -> None:
    code, doc = _check(tmp_path)
    assert code == 1 and "no finished speculators==0.9.0 venv" in doc["error"]
    assert "python scripts/speculators_venv.py" in doc["error"] and list(tmp_path.iterdir()) == []


def test_check_quotes_why_the_last_install_failed(tmp_path: Path) -> None:
    root = tmp_path / "speculators-0.9.0"
    root.mkdir()
    (root / "failed.txt").write_text("`pip install` exited 1: no matching distribution for hs-connectors\n")
    code, doc = _check(tmp_path)
    assert code == 1 and doc["error"].startswith(
        "the speculators==0.9.0 install failed: `pip install` exited 1"
    )


def test_check_reports_a_finished_install_only_with_its_stamp(tmp_path: Path) -> None:
    root = tmp_path / "speculators-0.9.0"
    python = root / "venv" / "bin" / "python"
    python.parent.mkdir(parents=True)
    python.write_text("")
    assert _check(tmp_path)[0] == 1  # a venv without the stamp is unfinished
    spec = importlib.util.spec_from_file_location("speculators_venv", SCRIPT)
    assert spec is not None and spec.loader is not None
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    (root / "dflash2-ckpt.stamp.json").write_text(json.dumps(script.STAMP))
    code, doc = _check(tmp_path)
    assert code == 0 and doc["python"] == str(python) and doc["reused"]
