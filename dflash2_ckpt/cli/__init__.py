"""Command line: each command builds inputs, calls one library function, renders, picks the exit code.

Exit codes: 0 passed, 1 error findings (warnings too with --strict), 2 usage, 3 could not run.
"""
from __future__ import annotations

import json
import os
import sys
import traceback
from typing import Any, Callable

import click
from rich.console import Console
from rich.markup import escape

from .. import schemas
from ..codes import all_codes
from ..errors import Dflash2Error
from ..findings import validate_selectors

EXIT_OK, EXIT_FINDINGS, EXIT_USAGE, EXIT_CANNOT_RUN = 0, 1, 2, 3


def _stderr() -> Console:
    return Console(stderr=True, highlight=False, soft_wrap=True)


def _stdout() -> Console:
    return Console(highlight=False, soft_wrap=True, width=None if sys.stdout.isatty() else 160)


def guarded(fn: Callable[..., int]) -> Callable[..., None]:
    """The one error boundary: typed errors become one line plus the next step, exit 3."""
    def wrapper(*args: Any, **kwargs: Any) -> None:
        try:
            code = fn(*args, **kwargs)
        except Dflash2Error as e:
            if os.environ.get("DFLASH2_CKPT_DEBUG"):
                traceback.print_exc()
            err = _stderr()
            err.print(f"[bold red]error:[/] {escape(str(e))}", markup=True)   # messages may hold [brackets]
            if e.hint:
                err.print(f"  hint: {e.hint}", markup=False)
            sys.exit(EXIT_CANNOT_RUN)
        sys.exit(code)
    wrapper.__name__ = fn.__name__
    wrapper.__doc__ = fn.__doc__
    return wrapper


def _codes(value: str | None) -> list[str]:
    if not value:
        return []
    items = [v.strip().upper() for v in value.split(",") if v.strip()]
    try:
        validate_selectors(items)
    except ValueError as e:
        raise click.BadParameter(str(e)) from None
    return items


def open_source(path: str, revision: str | None = None, token: str | None = None,
                subfolder: str | None = None, *, require_weights: bool = True) -> Any:
    """A local path if it exists, else a Hub repo id org/name[@rev][/subfolder] (dflash2_ckpt.sources.hub)."""
    from ..sources.hub import open_source as hub_open_source
    return hub_open_source(path, revision, token, subfolder, require_weights=require_weights)


def _target_source(target: str | None, token: str | None) -> Any:
    """--target: a local path as before (unreadable -> DF508 finding), or a Hub repo id (config.json only)."""
    from ..sources.hub import parse_repo_ref
    if target is None or os.path.exists(target) or parse_repo_ref(target) is None:
        return target
    return open_source(target, token=token, require_weights=False)


def hub_options(fn: Callable[..., Any]) -> Callable[..., Any]:
    """--revision / --subfolder / --token, shared by every command that reads a checkpoint."""
    fn = click.option("--token", default=None, envvar="HF_TOKEN", show_envvar=True,
                      help="Hugging Face token for private or gated repos.")(fn)
    fn = click.option("--subfolder", default=None, help="Folder inside the repo (or directory) holding the drafter.")(fn)
    return click.option("--revision", default=None, help="Branch, tag or commit of a Hub repo (or org/name@rev).")(fn)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="dflash2-ckpt")
def main() -> None:
    """Validate and convert DFlash / DFlash2 draft checkpoints."""


@main.command()
@click.argument("path")
@click.option("--target", type=click.Path(), help="Target model directory or Hub repo id (its config.json) to pair with.")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@click.option("--strict", is_flag=True, help="Fail on warnings too.")
@click.option("--select", default=None, help="Only these codes or prefixes, comma-separated (e.g. DF2,DF401).")
@click.option("--ignore", default=None, help="Skip these codes or prefixes, comma-separated.")
@click.option("--smoke", "with_smoke", is_flag=True,
              help="Then run the smoke forward on the tensors (needs the [smoke] extra: torch, triton).")
@click.option("--scan", is_flag=True,
              help="Also read every floating-point tensor (streamed, bounded memory) and report NaN / Inf (DF611).")
@hub_options
@guarded
def verify(path: str, target: str | None, fmt: str, strict: bool, select: str | None, ignore: str | None,
           with_smoke: bool, scan: bool, revision: str | None, subfolder: str | None, token: str | None) -> int:
    """Check config, tensor headers, v1/v2 identity, causality and target pairing.

    Reads no tensor data unless --scan is given."""
    from ..report import render_text
    from ..verify import verify as run_verify
    sel, ign = _codes(select), _codes(ignore)
    source = open_source(path, revision, token, subfolder)
    report = run_verify(source, target=_target_source(target, token), select=sel, ignore=ign, scan=scan)
    smoke_report = None
    if with_smoke and not report.failed():   # a checkpoint that fails its headers cannot be loaded
        from ..findings import filter_findings
        from ..smoke import run_smoke
        smoke_report = run_smoke(source, target=target)
        smoke_findings = filter_findings(smoke_report.findings, sel, ign)
    if fmt == "json":
        doc = report.to_json()
        if smoke_report is not None:
            doc["smoke"] = smoke_report.to_json()
            doc["smoke"]["findings"] = [f.to_json() for f in smoke_findings]
        click.echo(json.dumps(doc, indent=2, default=str))
    else:
        render_text(report, _stdout())
        if smoke_report is not None:
            click.echo(smoke_report.to_text())
    bad = ("error", "warning") if strict else ("error",)
    smoke_failed = smoke_report is not None and any(f.severity in bad for f in smoke_findings)
    return EXIT_FINDINGS if report.failed(strict) or smoke_failed else EXIT_OK


@main.command()
@click.argument("path")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@hub_options
@guarded
def inspect(path: str, fmt: str, revision: str | None, subfolder: str | None, token: str | None) -> int:
    """Show what a checkpoint is: dialect, version, geometry, per-layer causality, bytes by component."""
    from ..report import render_json, render_summary
    from ..verify import inspect as run_inspect
    report = run_inspect(open_source(path, revision, token, subfolder))
    if fmt == "json":
        click.echo(render_json(report))
    else:
        render_summary(report, _stdout())
    return EXIT_OK


@main.command()
@click.option("--write", "write_dir", type=click.Path(file_okay=False), help="Write the JSON Schemas into DIR.")
@click.option("--check", "check_dir", type=click.Path(file_okay=False),
              help="Exit 1 when the schemas in DIR differ from the models.")
@click.option("--dialect", type=click.Choice(sorted(schemas.FILES)), help="Print one schema.")
@guarded
def schema(write_dir: str | None, check_dir: str | None, dialect: str | None) -> int:
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


@main.command()
@click.option("--markdown", is_flag=True, help="The README table.")
@guarded
def codes(markdown: bool) -> int:
    """List every finding code."""
    click.echo(codes_table() if markdown else "\n".join(
        f"{c.code}  {c.severity:<7}  {c.name:<28} {c.summary}" for c in all_codes()))
    return EXIT_OK


def codes_table() -> str:
    rows = ["| code | name | severity | meaning |", "|---|---|---|---|"]
    rows += [f"| {c.code} | {c.name} | {c.severity} | {c.summary} |" for c in all_codes()]
    return "\n".join(rows)



@main.command()
@click.argument("directory", type=click.Path(exists=True, file_okay=False))
@click.argument("repo")
@click.option("--revision", default=None, help="Branch to commit to (default: main).")
@click.option("--create-pr", is_flag=True, help="Open a pull request instead of committing to the branch.")
@click.option("--smoke", "run_smoke", is_flag=True, help="Also run the smoke forward (needs the [smoke] extra).")
@click.option("--strict", is_flag=True, help="Refuse on warnings too.")
@click.option("--token", default=None, envvar="HF_TOKEN", show_envvar=True, help="Hugging Face token with write access.")
@click.option("--message", "-m", default=None, help="Commit message.")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@guarded
def push(directory: str, repo: str, revision: str | None, create_pr: bool, run_smoke: bool, strict: bool,
         token: str | None, message: str | None, fmt: str) -> int:
    """Verify DIRECTORY and upload it to REPO (org/name[/subfolder]) only if it passes; else upload nothing."""
    import json as _json

    from ..push import push as run_push
    from ..report import render_text
    result = run_push(directory, repo, revision=revision, create_pr=create_pr, smoke=run_smoke, strict=strict,
                      token=token, commit_message=message)
    if fmt == "json":
        click.echo(_json.dumps(result.to_json(), indent=2, default=str))
    else:
        render_text(result.report, _stdout())
        if result.uploaded:
            click.echo(f"uploaded: {result.pr_url or result.commit_url}")
        else:
            click.echo(f"refused by {result.refused_by}: nothing was uploaded to {repo}", err=True)
    return EXIT_OK if result.uploaded else EXIT_FINDINGS


@main.group()
def hook() -> None:
    """pre-commit entry points: FILES are mapped to their checkpoint directories, each checked once."""


def _hook_run(files: tuple[str, ...], level: str, strict: bool, select: str | None, ignore: str | None,
              target: str | None) -> int:
    from ..hooks import check_dirs, checkpoint_dirs
    from ..report import render_findings
    failed = False
    out = _stdout()
    for d, report in check_dirs(checkpoint_dirs(files), level,  # type: ignore[arg-type]
                                select=_codes(select), ignore=_codes(ignore), target=target):
        bad = report.failed(strict)
        failed |= bad
        if bad or report.findings:
            out.print(f"[bold]{escape(str(d))}[/bold]: {'FAILED' if bad else 'passed'} ({level} checks)")
            render_findings(report, out)
    return EXIT_FINDINGS if failed else EXIT_OK


def _hook_command(level: str, doc: str) -> None:
    @hook.command(name="config" if level == "config" else "verify", help=doc)
    @click.argument("files", nargs=-1)
    @click.option("--strict", is_flag=True, help="Fail on warnings too.")
    @click.option("--select", default=None, help="Only these codes or prefixes.")
    @click.option("--ignore", default=None, help="Skip these codes or prefixes.")
    @click.option("--target", default=None, type=click.Path(), help="Target model directory to pair with.")
    @guarded
    def run(files: tuple[str, ...], strict: bool, select: str | None, ignore: str | None, target: str | None) -> int:
        return _hook_run(files, level, strict, select, ignore, target)


_hook_command("config", "Config-level checks of each config.json (no weights opened).")
_hook_command("headers", "Header-level verify of each checkpoint directory (config, index, safetensors headers).")


@hook.command(name="smoke", context_settings={"ignore_unknown_options": True})
@click.argument("files", nargs=-1, type=click.UNPROCESSED)
@guarded
def hook_smoke(files: tuple[str, ...]) -> int:
    """Run `dflash2-ckpt smoke` once per checkpoint directory (options before the files are passed on)."""
    from ..hooks import checkpoint_dirs, run_smoke_hook
    opts = [f for f in files if f.startswith("-")]
    return run_smoke_hook(checkpoint_dirs(f for f in files if not f.startswith("-")), opts)

from .convert import convert_command  # noqa: E402  (imports cli helpers, so last)
main.add_command(convert_command, "convert")

def _register_optional_commands() -> None:
    # the command modules import torch lazily, inside the command body
    from .smoke import smoke_command
    main.add_command(smoke_command, "smoke")
    from .accept import accept_command
    main.add_command(accept_command, "accept")


_register_optional_commands()

if __name__ == "__main__":
    main()
