"""`dflash2-ckpt schema`: print, write or check the JSON Schema of each config dialect."""

from __future__ import annotations

import click

from ..formats import schemas
from .errors import EXIT_FINDINGS, EXIT_OK, guarded


def _dialect(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    try:
        return None if value is None else schemas.resolve(value)
    except ValueError as e:
        raise click.BadParameter(str(e)) from None


@click.command("schema", short_help="Print, write or check each config dialect's JSON Schema")
@click.option(
    "--write", "write_dir", type=click.Path(file_okay=False), help="Write the JSON Schemas into DIR."
)
@click.option(
    "--check",
    "check_dir",
    type=click.Path(file_okay=False),
    help="Exit 1 when the schemas in DIR differ from the models.",
)
@click.option(
    "--dialect",
    metavar="NAME",
    callback=_dialect,
    shell_complete=lambda ctx, param, text: [n for n in schemas.NAMES if n.startswith(text)],
    help=f"Print one schema: {', '.join(schemas.NAMES)} (the names inspect prints).",
)
@guarded
def command(write_dir: str | None, check_dir: str | None, dialect: str | None) -> int:
    """Print, write or check the JSON Schema of each config dialect."""
    if write_dir:
        for p in schemas.write(write_dir):
            click.echo(f"wrote {p}")
        return EXIT_OK
    if check_dir:
        stale = schemas.stale(check_dir)
        for name in stale:
            click.echo(f"stale: {name} (run: dflash2-ckpt schema --write {check_dir})", err=True)
        return EXIT_FINDINGS if stale else EXIT_OK
    gen = schemas.generate()
    click.echo(gen[dialect] if dialect else "\n".join(gen), nl=not dialect)
    return EXIT_OK
