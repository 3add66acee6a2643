"""Options shared by the commands, and the few steps every command takes the same way."""
from __future__ import annotations

import os
from typing import Any, Callable

import click

from ..findings import validate_selectors
from ..report import FORMATS, render
from ..sources import Source
from .errors import EXIT_FINDINGS, EXIT_OK

F = Callable[..., Any]


def format_option(fn: F) -> F:
    return click.option("--format", "fmt", type=click.Choice(sorted(FORMATS)), default="text", show_default=True,
                        help="text for people; json (one document); sarif (SARIF 2.1.0, code scanning); "
                             "github (workflow annotations).")(fn)


def strict_option(fn: F) -> F:
    return click.option("--strict", is_flag=True, help="Fail on warnings too.")(fn)


def select_options(fn: F) -> F:
    fn = click.option("--ignore", default=None, help="Skip these codes or prefixes, comma-separated.")(fn)
    return click.option("--select", default=None,
                        help="Only these codes or prefixes, comma-separated (e.g. DF2,DF401).")(fn)


def target_option(help: str = "Target model directory or Hub repo id (its config.json) to pair with.") -> Callable[[F], F]:
    return click.option("--target", default=None, type=click.Path(), help=help)


def _engines(ctx: click.Context, param: click.Parameter, values: tuple[str, ...]) -> tuple[str, ...]:
    from ..engines import UnknownEngine, resolve
    for v in values:
        try:
            resolve(v)
        except UnknownEngine as e:
            raise click.BadParameter(e.message, param_hint="--engine") from None
    return values


def engine_option(help: str) -> Callable[[F], F]:
    """--engine NAME[@VERSION], repeatable; a name or version no profile covers is a usage error."""
    return click.option("--engine", "engines", multiple=True, metavar="NAME[@VERSION]", callback=_engines, help=help)


def hub_options(fn: F) -> F:
    """--revision / --subfolder / --token, for every command that reads a checkpoint."""
    fn = click.option("--token", default=None, envvar="HF_TOKEN", show_envvar=True,
                      help="Hugging Face token for private or gated repos.")(fn)
    fn = click.option("--subfolder", default=None, help="Folder inside the repo (or directory) holding the drafter.")(fn)
    return click.option("--revision", default=None, help="Branch, tag or commit of a Hub repo (or org/name@rev).")(fn)


def parse_codes(value: str | None, option: str = "--select") -> list[str]:
    if not value:
        return []
    items = [v.strip().upper() for v in value.split(",") if v.strip()]
    try:
        validate_selectors(items)
    except ValueError as e:
        raise click.BadParameter(str(e), param_hint=option) from None
    return items


def open_source(path: str, revision: str | None = None, token: str | None = None,
                subfolder: str | None = None, *, require_weights: bool = True) -> Source:
    """A local path if it exists, else a Hub repo id org/name[@rev][/subfolder]."""
    from ..checkpoint.open_source import open_source as hub_open_source
    return hub_open_source(path, revision, token, subfolder, require_weights=require_weights)


def open_target(target: str | None, token: str | None) -> str | Source | None:
    """--target: a local path as given (unreadable -> a DF508 finding), or an opened Hub repo (config only)."""
    from ..sources.hub import hub_settings
    from ..sources.hub_ref import parse_repo_ref
    if target is None or os.path.exists(target) or parse_repo_ref(target, hub_settings()["endpoint"]) is None:
        return target
    return open_source(target, token=token, require_weights=False)


def emit(report: Any, fmt: str, strict: bool = False) -> int:
    """Render `report` in `fmt` on stdout; the exit code its findings call for."""
    render(report, fmt)
    return EXIT_FINDINGS if report.failed(strict) else EXIT_OK
