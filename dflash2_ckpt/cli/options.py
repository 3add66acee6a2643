"""Options shared by the commands, and the few steps every command takes the same way."""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Iterable
from typing import Any

import click

from ..errors import UsageError
from ..findings import validate_selectors
from ..report import FORMATS, render
from ..sources import Source
from .completion import complete_codes, complete_engine
from .errors import EXIT_FINDINGS, EXIT_OK
from .outputs import STDOUT, Output, remember_follow, stdout_format, write_outputs

F = Callable[..., Any]


class OlderSpelling(click.Option):
    """An option with an older name kept working: left out of --help, and a note on stderr when used.

    One grammar across commands: `-o/--output-dir` is where a command writes what it makes (convert),
    `--output FORMAT=FILE` a report file (every reporting command). convert's `--output` and audit's
    `-o FILE` came first and keep working."""

    def __init__(self, *decls: Any, older: str, note: str, **kw: Any) -> None:
        super().__init__(*decls, **kw)
        self.older, self.note = older, note

    def get_help_record(self, ctx: click.Context) -> tuple[str, str] | None:
        opts = self.opts
        self.opts = [o for o in opts if o != self.older]
        try:
            return super().get_help_record(ctx)
        finally:
            self.opts = opts

    def used_older(self, ctx: click.Context) -> bool:
        """Whether the command line spelled this option the older way (the argv the group kept)."""
        argv: list[str] = ctx.meta.get("dflash2.argv", [])
        if self.older.startswith("--"):
            return any(a == self.older or a.startswith(f"{self.older}=") for a in argv)
        return any(a.startswith(self.older) and not a.startswith("--") for a in argv)

    def process_value(self, ctx: click.Context, value: Any) -> Any:
        if self.used_older(ctx):
            click.echo(f"note: {self.note}", err=True)
        return super().process_value(ctx, value)


def format_option(fn: F) -> F:
    return click.option(
        "--format",
        "fmt",
        type=click.Choice(sorted(FORMATS)),
        default="text",
        show_default=True,
        help="text for people; json (one document); sarif (SARIF 2.1.0, code scanning); "
        "github (workflow annotations).",
    )(fn)


def verbose_option(fn: F) -> F:
    return click.option(
        "--verbose",
        "-v",
        is_flag=True,
        default=False,
        help="Text: the full report (every engine release, the citations of each fact); "
        "json and sarif always carry it all.",
    )(fn)


def parse_output(value: str, formats: Iterable[str], bare: bool = False) -> Output:
    """`FORMAT=FILE` -> (format, file); with `bare`, a plain FILE -> ("", FILE): the --format of the run
    (audit's older `-o FILE`)."""
    fmt, sep, path = value.partition("=")
    if sep and fmt in formats and path:
        return fmt, path
    if bare and not (sep and fmt.isalpha()):
        return "", value
    raise click.BadParameter(
        f"{value!r} is not FORMAT=FILE with FORMAT one of {', '.join(sorted(formats))}", param_hint="--output"
    )


def output_option(fn: F) -> F:
    """--output FORMAT=FILE, repeatable: the same report in more formats, one file each, in the same run."""
    return outputs_option()(fn)


def outputs_option(formats: Iterable[str] | None = None, bare: bool = False) -> Callable[[F], F]:
    """--output over other formats (audit's tables); with `bare`, also `-o FILE` for the --format output."""
    names = sorted(formats or FORMATS)

    def parse(ctx: click.Context, param: click.Parameter, values: tuple[str, ...]) -> tuple[Output, ...]:
        outputs = tuple(parse_output(v, names, bare) for v in values)
        if sum(path == STDOUT for _, path in outputs) > 1:
            raise click.BadParameter("only one output can go to stdout (-)", param_hint="--output")
        return outputs

    older: dict[str, Any] = (
        {
            "cls": OlderSpelling,
            "older": "-o",
            "note": "audit's -o is now --output FORMAT=FILE (e.g. --output html=audit.html), "
            "as in every command; -o FILE still works here",
        }
        if bare
        else {}
    )
    decls = ["-o", "--output"] if bare else ["--output"]
    output = click.option(
        *decls,
        "outputs",
        multiple=True,
        metavar="FORMAT=FILE",
        callback=parse,
        **older,
        help=f"Also write the report as FORMAT ({', '.join(names)}) to FILE; repeatable, e.g. "
        "--output sarif=r.sarif --output json=r.json; FILE - is stdout, in place of "
        "--format's output. An error document goes there too. "
        "Written atomically; never through a symbolic link (see --output-follow-symlinks) "
        "nor over a file of the checkpoint being read."
        + (" A bare FILE (the older `-o FILE`) gets the --format output instead of stdout." if bare else ""),
    )
    follow = click.option(
        "--output-follow-symlinks",
        is_flag=True,
        expose_value=False,
        callback=remember_follow,
        help="Write an output FILE that is a symbolic link to the link's target.",
    )
    return lambda fn: output(follow(fn))


def threads_option(fn: F) -> F:
    return click.option(
        "--threads",
        type=click.IntRange(min=1),
        default=None,
        help="torch intra-op threads (default: OMP_NUM_THREADS, else the usable cores less the "
        "load average; one when they are busy).",
    )(fn)


def strict_option(fn: F) -> F:
    return click.option("--strict", is_flag=True, help="Fail on warnings too.")(fn)


def fix_options(fn: F) -> F:
    """ruff's --fix / --diff / --unsafe-fixes (the fixers: dflash2_ckpt.usecases.fix)."""
    fn = click.option(
        "--unsafe-fixes",
        "unsafe_fixes",
        is_flag=True,
        help="With --fix or --diff, also apply the fixes marked unsafe ([~]).",
    )(fn)
    fn = click.option(
        "--diff",
        "show_diff",
        is_flag=True,
        help="Print the unified diff of what --fix would change, write nothing (exit 1 if any).",
    )(fn)
    return click.option(
        "--fix",
        "apply_fixes",
        is_flag=True,
        help="Apply the safe fixes ([*]) in place (config.json keys, tensor names in the "
        "safetensors header; never a tensor byte), then verify again.",
    )(fn)


def select_options(fn: F) -> F:
    fn = click.option(
        "--ignore",
        default=None,
        shell_complete=complete_codes,
        help="Skip these codes or prefixes, comma-separated.",
    )(fn)
    return click.option(
        "--select",
        default=None,
        shell_complete=complete_codes,
        help="Only these codes or prefixes, comma-separated (e.g. DF2,DF401).",
    )(fn)


def statistics_option(fn: F) -> F:
    return click.option(
        "--statistics",
        is_flag=True,
        help="Print how many findings of each code instead of every finding (text or json; "
        "--output files still get the whole report).",
    )(fn)


def exit_zero_option(fn: F) -> F:
    return click.option(
        "--exit-zero",
        is_flag=True,
        help="Exit 0 even when findings fail the run (they are still reported); errors that "
        "stop the run keep their exit codes.",
    )(fn)


def check_statistics(statistics: bool, fmt: str, outputs: Iterable[Output]) -> None:
    """--statistics takes stdout, as text or json: refused with another format or an `--output F=-`."""

    if statistics and (fmt not in ("text", "json") or any(path == STDOUT for _, path in outputs)):
        raise UsageError(
            f"--statistics prints text or json on stdout, not {stdout_format(outputs, fmt)}",
            hint="drop --statistics, or use --format text|json and --output FORMAT=FILE",
        )


def target_option(
    help: str = "Target model directory or Hub repo id (its config.json) to pair with.",
) -> Callable[[F], F]:
    return click.option("--target", default=None, type=click.Path(), help=help)


def _engines(ctx: click.Context, param: click.Parameter, values: tuple[str, ...]) -> tuple[str, ...]:
    from ..engines import UnknownEngine, resolve  # lazy: engines loads only on this path

    for v in values:
        try:
            resolve(v)
        except UnknownEngine as e:
            raise click.BadParameter(e.message, param_hint="--engine") from None
    return values


def engine_option(help: str) -> Callable[[F], F]:
    """--engine NAME[@VERSION], repeatable; a name or version no profile covers is a usage error."""
    return click.option(
        "--engine",
        "engines",
        multiple=True,
        metavar="NAME[@VERSION]",
        callback=_engines,
        shell_complete=complete_engine,
        help=help,
    )


def hub_options(fn: F) -> F:
    """--revision / --subfolder / --token, for every command that reads a checkpoint."""
    fn = click.option(
        "--token",
        default=None,
        envvar="HF_TOKEN",
        show_envvar=True,
        help="Hugging Face token for private or gated repos.",
    )(fn)
    fn = click.option(
        "--subfolder", default=None, help="Folder inside the repo (or directory) holding the drafter."
    )(fn)
    return click.option(
        "--revision", default=None, help="Branch, tag or commit of a Hub repo (or org/name@rev)."
    )(fn)


def parse_codes(value: str | None, option: str = "--select") -> list[str]:
    if not value:
        return []
    items = [v.strip().upper() for v in value.split(",") if v.strip()]
    try:
        validate_selectors(items)
    except ValueError as e:
        raise click.BadParameter(str(e), param_hint=option) from None
    return items


def open_source(
    path: str,
    revision: str | None = None,
    token: str | None = None,
    subfolder: str | None = None,
    *,
    require_weights: bool = True,
) -> Source:
    """A local path if it exists, else a Hub repo id org/name[@rev][/subfolder]."""
    # lazy: checkpoint.open_source loads only on this path
    from ..checkpoint.open_source import open_source as hub_open_source

    return hub_open_source(path, revision, token, subfolder, require_weights=require_weights)


def open_target(target: str | None, token: str | None) -> str | Source | None:
    """--target: a local path as given (unreadable -> a DF508 finding), or an opened Hub repo (config only)."""
    if target is None or os.path.exists(target):
        return target
    from ..sources.hub import hub_settings  # lazy: sources.hub loads only on this path
    from ..sources.hub_ref import parse_repo_ref  # lazy: sources.hub_ref loads only on this path

    if parse_repo_ref(target, hub_settings()["endpoint"]) is None:
        return target
    return open_source(target, token=token, require_weights=False)


def emit(
    report: Any,
    fmt: str,
    strict: bool = False,
    outputs: Iterable[Output] = (),
    *,
    statistics: bool = False,
    exit_zero: bool = False,
) -> int:
    """Render `report` in `fmt` on stdout (or its count per code, `statistics`) and in each --output file;
    the exit code its findings call for (0 with `exit_zero`)."""
    if not write_outputs(report, outputs):
        if statistics:
            # lazy: report.statistics loads only on this path
            from ..report.statistics import render as render_statistics

            render_statistics(report, fmt)
        else:
            render(report, fmt)
    return EXIT_FINDINGS if report.failed(strict) and not exit_zero else EXIT_OK


# settings key -> (the command's parameter, how the file's value becomes the parameter's value)
_SETTING_PARAMS: dict[str, tuple[str, Callable[[Any], Any]]] = {
    "select": ("select", lambda v: ",".join(v) or None),
    "ignore": ("ignore", lambda v: ",".join(v) or None),
    "strict": ("strict", bool),
    "engines": ("engines", tuple),
    "target": ("target", lambda v: v),
}


def _settings_engines(values: tuple[str, ...], origin: str) -> None:
    from ..engines import UnknownEngine, resolve  # lazy: engines loads only on this path

    for v in values:
        try:
            resolve(v)
        except UnknownEngine as e:
            raise UsageError(
                f"engines: {e.message} (from {origin})", hint="see `dflash2-ckpt compat --help`"
            ) from None


def command_line_settings(ctx: click.Context, params: dict[str, Any]) -> dict[str, Any]:
    """The settings keys the user gave on the command line, in the settings file's form."""
    given: dict[str, Any] = {}
    for key, (param, _) in _SETTING_PARAMS.items():
        if param not in params or ctx.get_parameter_source(param) in (
            None,
            click.core.ParameterSource.DEFAULT,
        ):
            continue
        value = params[param]
        given[key] = (
            parse_codes(value, f"--{key}")
            if key in ("select", "ignore")
            else list(value)
            if key == "engines"
            else value
        ) or None
    return given


def configured(subject: str | None = None, each: bool = False) -> Callable[[F], F]:
    """Add --config FILE and fill the parameters from [tool.dflash2-ckpt] (found from the working directory
    upward) resolved for the `subject` argument, the command line's options over it. With `each`, the
    command judges many checkpoints: it gets `settings_for(PATH)`, the settings of each (the command-level
    parameters are filled from the table alone). Goes under @guarded, so a bad settings file is a usage
    error (exit 2)."""

    def deco(fn: F) -> F:
        @functools.wraps(fn)
        def wrapper(*args: Any, config: str | None = None, **kwargs: Any) -> Any:
            from .settings import load  # lazy: cli.settings loads only on this path

            project = load(config)
            given = command_line_settings(click.get_current_context(), kwargs)

            def settings_for(path: str | None) -> Any:
                settings = project.settings(path, given)
                if settings.origins["engines"] not in ("default", "command line"):
                    _settings_engines(tuple(settings.values["engines"]), settings.origins["engines"])
                return settings

            settings = settings_for(kwargs.get(subject) if subject else None)
            for key, (param, convert) in _SETTING_PARAMS.items():
                if param in kwargs and settings.origins[key] != "default":
                    kwargs[param] = convert(settings.values[key])
            if each:
                kwargs["settings_for"] = settings_for
            return fn(*args, **kwargs)

        return click.option(
            "--config",
            "config",
            type=click.Path(dir_okay=False),
            default=None,
            help="Settings file (default: the nearest pyproject.toml with [tool.dflash2-ckpt]).",
        )(wrapper)

    return deco
