"""`dflash2-ckpt schema`: print, write or check the JSON Schema of each config dialect."""
from __future__ import annotations

import click

from ..formats import schemas
from .errors import EXIT_FINDINGS, EXIT_OK, guarded


@click.command("schema")
@click.option("--write", "write_dir", type=click.Path(file_okay=False), help="Write the JSON Schemas into DIR.")
@click.option("--check", "check_dir", type=click.Path(file_okay=False),
              help="Exit 1 when the schemas in DIR differ from the models.")
@click.option("--dialect", type=click.Choice(sorted(schemas.FILES)), help="Print one schema.")
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
