"""`dflash2-ckpt codes [CODE]`: every finding code as a list (or the README table), or one code's page."""

from __future__ import annotations

import click

from ..codes import REGISTRY, close_matches
from ..codes import markdown_table as codes_table
from .completion import complete_code
from .errors import EXIT_OK, guarded

__all__ = ["codes_table", "command"]


def _known(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    if value is None or value.upper() in REGISTRY:
        return value.upper() if value else None
    near = close_matches(value)
    hint = (
        f"; did you mean {' or '.join(f'{c} ({REGISTRY[c].name})' for c in near)}?"
        if near
        else "; `dflash2-ckpt codes` lists every code"
    )
    raise click.BadParameter(f"no finding code {value!r}{hint}", param_hint="CODE")


@click.command("codes", short_help="List the finding codes, or show one code's page")
@click.argument("code", required=False, callback=_known, shell_complete=complete_code)
@click.option("--markdown", is_flag=True, help="The README table.")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "json"]),
    default="text",
    show_default=True,
    help="text for people; json (one document: the code's fields, or a list of every code).",
)
@guarded
def command(code: str | None, markdown: bool, fmt: str) -> int:
    """List every finding code, or print one code's page (name, severity, what breaks, how to fix)."""
    from ..report.codes_out import render  # lazy: report.codes_out loads only on this path

    render(REGISTRY[code] if code else None, "markdown" if markdown and code is None else fmt)
    return EXIT_OK
