"""`dflash2-ckpt audit`: header-level verify + compat for many drafters, as one compatibility table."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

import click

from ..errors import SourceError, UsageError
from ..report import render
from .completion import complete_path
from .errors import EXIT_FINDINGS, EXIT_OK, guarded
from .options import configured, outputs_option, verbose_option
from .outputs import write_outputs
from .progress import progress

AUDIT_FORMATS = ("text", "json", "markdown", "html", "sarif", "github")


def _judged(row: Any, settings_for: Callable[[str], Any]) -> Any:
    """The row seen through its own drafter's settings: the per-path entries matching what was named
    (a directory, or a repo id as given) select and ignore its findings; the engines stay the table's
    (they are the audit's columns)."""
    values = settings_for(row.input).values
    return row.filtered(values["select"], values["ignore"]) if values["select"] or values["ignore"] else row


@click.command("audit", short_help="Audit many drafters: Hub repos, directories, a list, a search")
@click.argument("drafters", nargs=-1, shell_complete=complete_path)
@click.option(
    "--from-file", type=click.Path(dir_okay=False), help="A file with one repo id or directory per line."
)
@click.option(
    "--hub-search",
    default=None,
    help="Drafters from the Hub model listing: free words, tag:X, author:X, arch:X "
    '(e.g. "dflash arch:DFlash2DraftModel").',
)
@click.option(
    "--engine",
    "engines",
    multiple=True,
    help="Judge against these engines only (NAME or NAME@VERSION, repeatable); default every profile.",
)
@click.option(
    "--jobs", type=click.IntRange(1, 64), default=8, show_default=True, help="Drafters checked at once."
)
@click.option(
    "--rate",
    type=click.FloatRange(min=0.1),
    default=10.0,
    show_default=True,
    help="Hub requests per second, at most (every request counts: metadata, Range reads, retries).",
)
@click.option(
    "--cache",
    "cache_dir",
    type=click.Path(file_okay=False),
    default=None,
    help="Keep one row per repo + commit sha here; a re-run reads only what changed.",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(AUDIT_FORMATS),
    default="text",
    show_default=True,
    help="markdown: for a model card; html: one self-contained page, sortable and filterable; "
    "sarif / github: every drafter's findings.",
)
@outputs_option(AUDIT_FORMATS, bare=True)
@verbose_option
@click.option("--token", default=None, envvar="HF_TOKEN", show_envvar=True, help="Hugging Face token.")
@guarded
@configured(each=True)
def command(
    drafters: tuple[str, ...],
    from_file: str | None,
    hub_search: str | None,
    engines: tuple[str, ...],
    jobs: int,
    rate: float,
    cache_dir: str | None,
    fmt: str,
    outputs: tuple[tuple[str, str], ...],
    token: str | None,
    settings_for: Callable[[str], Any],
    verbose: bool = False,
) -> int:
    """Audit many drafters (repo ids org/name[@rev][/subfolder], directories, a list, a Hub search).

    Exit 0 when every drafter loads cleanly on the engines asked for, 1 otherwise, 3 when none could be read."""
    from ..audit import audit, collect  # lazy: audit loads only on this path

    items = collect(drafters, from_file=from_file, search=hub_search, token=token)
    if not items:
        raise UsageError("nothing to audit", hint="name drafters, or give --from-file or --hub-search")
    with progress("audit", fmt=fmt) as update:
        result = audit(
            items,
            engines=engines,
            jobs=jobs,
            cache_dir=cache_dir,
            rate=rate,
            token=token,
            progress=lambda done, total, row: update(done, total, row.repo, ""),
        )
    result = replace(result, rows=tuple(_judged(row, settings_for) for row in result.rows))
    if result.nothing_audited():
        reasons = "; ".join(f"{r.input}: {(r.error or {}).get('message')}" for r in result.rows[:5])
        raise SourceError(
            f"none of the {len(result.rows)} drafter(s) could be read ({reasons}"
            f"{'; ...' if len(result.rows) > 5 else ''})",
            hint=str((result.rows[0].error or {}).get("hint") or "check the repo ids and the network"),
        )
    files = [(ofmt, path) for ofmt, path in outputs if ofmt]
    bare = [path for ofmt, path in outputs if not ofmt]  # -o FILE: the --format output goes there
    if not write_outputs(result, files + [(fmt, p) for p in bare], verbose=verbose) and not bare:
        render(result, fmt, verbose=verbose)
    return EXIT_OK if result.passed else EXIT_FINDINGS
