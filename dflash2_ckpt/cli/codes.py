"""`dflash2-ckpt codes`: every finding code, as a list or as the README table."""
from __future__ import annotations

import click

from ..codes import all_codes
from ..codes import markdown_table as codes_table
from .errors import EXIT_OK, guarded

__all__ = ["codes_table", "command"]


@click.command("codes")
@click.option("--markdown", is_flag=True, help="The README table.")
@guarded
def command(markdown: bool) -> int:
    """List every finding code."""
    click.echo(codes_table() if markdown else "\n".join(
        f"{c.code}  {c.severity:<7}  {c.name:<28} {c.summary}" for c in all_codes()))
    return EXIT_OK
