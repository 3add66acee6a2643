"""`dflash2-ckpt push DIR org/name`: the pre-upload gate (dflash2_ckpt.usecases.push): verify, smoke, then upload."""
from __future__ import annotations

import click

from .errors import EXIT_FINDINGS, EXIT_OK, guarded
from .options import format_option, strict_option


@click.command("push")
@click.argument("directory", type=click.Path(exists=True, file_okay=False))
@click.argument("repo")
@click.option("--revision", default=None, help="Branch to commit to (default: main).")
@click.option("--create-pr", is_flag=True, help="Open a pull request instead of committing to the branch.")
@click.option("--smoke", "run_smoke", is_flag=True, help="Also run the smoke forward (needs the [smoke] extra).")
@strict_option
@click.option("--token", default=None, envvar="HF_TOKEN", show_envvar=True, help="Hugging Face token with write access.")
@click.option("--message", "-m", default=None, help="Commit message.")
@format_option
@guarded
def command(directory: str, repo: str, revision: str | None, create_pr: bool, run_smoke: bool, strict: bool,
            token: str | None, message: str | None, fmt: str) -> int:
    """Verify DIRECTORY and upload it to REPO (org/name[/subfolder]) only if it passes; else upload nothing."""
    from ..usecases.push import push
    from ..report import render
    result = push(directory, repo, revision=revision, create_pr=create_pr, smoke=run_smoke, strict=strict,
                  token=token, commit_message=message)
    render(result, fmt)
    return EXIT_OK if result.uploaded else EXIT_FINDINGS
