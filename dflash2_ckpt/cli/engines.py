"""`dflash2-ckpt engines`: every engine the toolkit judges, the releases whose code was checked, and what
each release range loads."""

from __future__ import annotations

import click

from .errors import EXIT_OK, guarded


@click.command("engines", short_help="List the engines, the releases read, and what each loads")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "json"]),
    default="text",
    show_default=True,
    help="text for people; json (one document: engines, each with its profiles).",
)
@guarded
def command(fmt: str) -> int:
    """List every engine, the oldest and newest release whose code was read, and what each profile loads."""
    from ..engines.listing import engines_document  # lazy: engines.listing loads only on this path
    from ..report.engines_out import render  # lazy: report.engines_out loads only on this path

    render(engines_document(), fmt)
    return EXIT_OK
