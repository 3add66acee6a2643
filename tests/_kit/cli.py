"""Drive the CLI in-process (click's CliRunner keeps stdout and stderr apart). Every test drives the CLI
through these: an exception is never caught into an exit code, so a traceback fails the test."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

import click
from click.testing import CliRunner, Result

from dflash2_ckpt.cli import main


def invoke_cli(
    command: click.Command,
    argv: Iterable[str],
    *,
    env: dict[str, str] | None = None,
    prog_name: str | None = None,
) -> Result:
    """One command (the whole CLI `main`, or one subcommand) on an argument list."""
    return CliRunner(env=env).invoke(command, list(argv), catch_exceptions=False, prog_name=prog_name)


def invoke(*args: str, env: dict[str, str] | None = None) -> Result:
    """The whole click Result (exit_code, output, stdout, stderr); exceptions propagate."""
    return invoke_cli(main, args, env=env)


def run(*args: str, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    res = invoke(*args, env=env)
    return res.exit_code, res.stdout, res.stderr


def run_output(*args: str, env: dict[str, str] | None = None) -> tuple[int, str]:
    """Exit code and stdout + stderr as a user sees them in a terminal."""
    res = invoke(*args, env=env)
    return res.exit_code, res.output


def run_json(*args: str, command: click.Command = main) -> tuple[int, Any]:
    """Exit code and the one JSON document of `ARGS --format json` on stdout ({} when nothing was printed);
    stderr (accept's progress lines) is not part of it."""
    res = invoke_cli(command, [*args, "--format", "json"])
    return res.exit_code, json.loads(res.stdout) if res.stdout.strip() else {}


def one_json(stdout: str) -> Any:
    """stdout must be exactly one JSON document (json.loads refuses trailing text)."""
    return json.loads(stdout)
