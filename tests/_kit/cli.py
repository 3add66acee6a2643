"""Drive the CLI in-process (click's CliRunner keeps stdout and stderr apart)."""
from __future__ import annotations

import json
from typing import Any

from click.testing import CliRunner, Result

from dflash2_ckpt.cli import main


def invoke(*args: str, env: dict[str, str] | None = None) -> Result:
    """The whole click Result (exit_code, output, stdout, stderr); exceptions propagate."""
    return CliRunner(env=env).invoke(main, list(args), catch_exceptions=False)


def run(*args: str, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    res = invoke(*args, env=env)
    return res.exit_code, res.stdout, res.stderr


def run_output(*args: str, env: dict[str, str] | None = None) -> tuple[int, str]:
    """Exit code and stdout + stderr as a user sees them in a terminal."""
    res = invoke(*args, env=env)
    return res.exit_code, res.output


def one_json(stdout: str) -> Any:
    """stdout must be exactly one JSON document (json.loads refuses trailing text)."""
    return json.loads(stdout)
