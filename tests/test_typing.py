"""The package type-checks under mypy --strict (configuration in pyproject.toml), so CI runs it with the suite."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

from conftest import ROOT


def test_mypy_strict_is_clean() -> None:
    pytest.importorskip("mypy")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    r = subprocess.run([sys.executable, "-m", "mypy", "--no-error-summary"], cwd=ROOT, env=env,
                       capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, r.stdout + r.stderr
