"""Drive the CLI in-process (click's CliRunner keeps stdout and stderr apart)."""
from __future__ import annotations

import json
from typing import Any

from click.testing import CliRunner

from dflash2_ckpt.cli import main


def run(*args: str, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    res = CliRunner(env=env).invoke(main, list(args), catch_exceptions=False)
    return res.exit_code, res.stdout, res.stderr


def one_json(stdout: str) -> Any:
    """stdout must be exactly one JSON document (json.loads refuses trailing text)."""
    return json.loads(stdout)
