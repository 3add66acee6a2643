"""Command line, the top of the import graph: nothing in the package imports `cli`, and only `cli` imports click.

Each command is one module here exposing one click command named `command`: it builds inputs (shared
options in cli/options.py), calls one library function, renders with `dflash2_ckpt.report.render`
(`--format text|json|sarif|github`) and returns the exit code; cli/errors.py is the one error boundary
and the one table of error types -> exit codes. Exit codes: 0 passed, 1 error findings (warnings too
with --strict) or a refusal, 2 usage, 3 could not run, 130 interrupted.

Adding a command: write cli/<name>.py with `command = click.command("<name>")(...)` wrapped in
`@guarded`, and add "<name>" to COMMANDS below. That is all.
"""

from __future__ import annotations

import importlib
import sys
from typing import Any

import click

from .errors import EXIT_USAGE, write_error_outputs

__all__ = ["main", "codes_table", "COMMANDS"]


def __getattr__(name: str) -> object:
    if name == "codes_table":  # library API kept; the codes module loads on first use
        from .codes import codes_table  # lazy: cli.codes loads only on this path

        return codes_table
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# one line per command, in `--help` order; each names the module cli/<name>.py
COMMANDS = [
    "verify",
    "compat",
    "inspect",
    "convert",
    "diff",
    "smoke",
    "accept",
    "push",
    "audit",
    "hook",
    "config",
    "schema",
    "codes",
    "engines",
]

MACHINE_FORMATS = ("json", "sarif", "github")


def _format_in(argv: list[str]) -> str:
    for i, a in enumerate(argv):
        if a == "--format" and i + 1 < len(argv):
            return argv[i + 1]
        if a.startswith("--format="):
            return a.split("=", 1)[1]
    return "text"


def _outputs_in(argv: list[str]) -> list[tuple[str, str]]:
    """The --output FORMAT=FILE pairs of a command line that click refused (so its files get the error too)."""
    values = [argv[i + 1] for i, a in enumerate(argv[:-1]) if a in ("--output", "-o")]
    values += [a.split("=", 1)[1] for a in argv if a.startswith("--output=")]
    pairs = [v.partition("=") for v in values]
    return [(f, p) for f, sep, p in pairs if sep and f in (*MACHINE_FORMATS, "text") and p]


class FrontDoor(click.Group):
    """A click group that keeps the machine-output contract for usage mistakes too: with a machine
    `--format`, a bad option or argument prints one error document on stdout (and exits 2).

    Commands load lazily: cli/<name>.py is imported when its command runs (or `--help` lists them), so
    `--version` and a header verify do not pay for every command's imports."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in COMMANDS:
            return None
        if cmd_name not in self.commands:
            self.add_command(importlib.import_module(f".{cmd_name}", __name__).command, cmd_name)
        return self.commands[cmd_name]

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        ctx.meta["dflash2.argv"] = list(args)
        return super().parse_args(ctx, args)

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except click.UsageError as e:
            from .outputs import stdout_format  # lazy: cli.outputs loads only on this path

            argv = ctx.meta.get("dflash2.argv", [])
            doc = {
                "type": "UsageError",
                "message": e.format_message(),
                "hint": "see --help",
                "label": "usage",
                "exit_code": EXIT_USAGE,
            }
            write_error_outputs(doc, _outputs_in(argv), argv=argv)
            fmt = stdout_format(_outputs_in(argv), _format_in(argv))
            if fmt in MACHINE_FORMATS:
                from ..report import render_error  # lazy: report loads only on this path

                render_error(doc, fmt)
                e.show()
                sys.exit(EXIT_USAGE)
            raise


@click.group(cls=FrontDoor, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="dflash2-ckpt")
def main() -> None:
    """Validate and convert DFlash / DFlash2 draft checkpoints."""
