"""`dflash2-ckpt push DIR org/name`: the pre-upload gate (dflash2_ckpt.usecases.push): verify, smoke, then upload."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from ..report import render
from .errors import EXIT_FINDINGS, EXIT_OK, guarded
from .options import (
    configured,
    engine_option,
    format_option,
    parse_codes,
    select_options,
    strict_option,
    target_option,
)


@click.command("push", short_help="Verify a directory, then upload it to the Hub if it passes")
@click.argument("directory", type=click.Path(exists=True, file_okay=False))
@click.argument("repo")
@click.option("--revision", default=None, help="Branch to commit to (default: main).")
@click.option("--create-pr", is_flag=True, help="Open a pull request instead of committing to the branch.")
@click.option(
    "--smoke", "run_smoke", is_flag=True, help="Also run the smoke forward (needs the [smoke] extra)."
)
@strict_option
@click.option(
    "--token", default=None, envvar="HF_TOKEN", show_envvar=True, help="Hugging Face token with write access."
)
@click.option("--message", "-m", default=None, help="Commit message.")
@click.option(
    "--include-pickles",
    is_flag=True,
    help="Also upload pickle files (.bin / .pt / .pth / .ckpt / .pkl); left out by default.",
)
@click.option(
    "--card/--no-card",
    default=True,
    show_default=True,
    help="Check README.md's front matter against the config (a contradiction refuses) and complete it "
    "(base_model, tags, library_name, pipeline_tag).",
)
@click.option(
    "--accept-table",
    type=click.Path(exists=True, dir_okay=False),
    default=None,
    help="Put this markdown (from `dflash2-ckpt accept --format markdown`) in the card.",
)
@click.option("--private", is_flag=True, help="Create the repository private when it does not exist yet.")
@click.option(
    "--include",
    multiple=True,
    metavar="PATTERN",
    help="Upload only files matching this glob (repeatable), as `hf upload --include`.",
)
@click.option(
    "--exclude",
    multiple=True,
    metavar="PATTERN",
    help="Leave out files matching this glob (repeatable), as `hf upload --exclude`.",
)
@click.option(
    "--delete",
    multiple=True,
    metavar="PATTERN",
    help="Delete files matching this glob from the Hub in the same commit, except those uploaded "
    "(repeatable; e.g. '*.safetensors' drops stale shards), as `hf upload --delete`.",
)
@click.option(
    "--yes",
    "-y",
    is_flag=True,
    help="Delete the Hub files --delete matches without asking (a push that deletes lists them and "
    "asks on a terminal; elsewhere it is refused without --yes).",
)
@click.option(
    "--dry-run",
    is_flag=True,
    help="Run the checks and show the file plan (upload / delete / unchanged) and the card's diff "
    "against the Hub's; upload nothing and leave DIRECTORY as it is.",
)
@select_options
@target_option("Target model directory (its config.json) the verify pairs DIRECTORY with.")
@engine_option("Judge causality against these engine profiles (repeatable).")
@format_option
@guarded
@configured("directory")
def command(
    directory: str,
    repo: str,
    revision: str | None,
    create_pr: bool,
    run_smoke: bool,
    strict: bool,
    token: str | None,
    message: str | None,
    include_pickles: bool,
    card: bool,
    accept_table: str | None,
    private: bool,
    include: tuple[str, ...],
    exclude: tuple[str, ...],
    delete: tuple[str, ...],
    yes: bool,
    dry_run: bool,
    select: str | None,
    ignore: str | None,
    target: str | None,
    engines: tuple[str, ...],
    fmt: str,
) -> int:
    """Verify DIRECTORY and upload it to REPO (org/name[/subfolder]) only if it passes; else upload nothing."""
    from ..usecases.push import PushOptions, push  # lazy: usecases.push loads only on this path

    options = PushOptions(
        revision=revision,
        create_pr=create_pr,
        smoke=run_smoke,
        strict=strict,
        token=token,
        commit_message=message,
        include_pickles=include_pickles,
        card=card,
        private=private,
        select=parse_codes(select, "--select"),
        ignore=parse_codes(ignore, "--ignore"),
        target=target,
        engines=engines,
        accept_table=Path(accept_table).read_text(encoding="utf-8") if accept_table else None,
        dry_run=dry_run,
        include=include,
        exclude=exclude,
        delete=delete,
        yes=yes,
        confirm=_ask,
    )
    result = push(directory, repo, options)
    render(result, fmt)
    return EXIT_FINDINGS if result.failed(strict) else EXIT_OK


def _ask(paths: tuple[str, ...]) -> bool:
    """On a terminal: list every file the push would delete and ask; elsewhere no (the push is refused)."""

    if not (sys.stdin.isatty() and sys.stderr.isatty()):
        return False
    from ..report.safe import printable  # lazy: report.safe loads only on this path

    click.echo(f"The push would delete {len(paths)} file(s) from the Hub:", err=True)
    for p in paths:
        click.echo(f"  delete {printable(p).replace(chr(10), chr(92) + 'n')}", err=True)
    return click.confirm("Delete them?", default=False, err=True)
