"""`--format text`: rich tables for people. One layout per report kind, looked up by the kind's name."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import IO, Any

from rich.console import Console
from rich.markup import escape
from rich.segment import Segment
from rich.table import Table
from rich.text import Text

from ..findings import Verdict, fix_marker
from .engine_tables import render_engine_tables
from .fit import columns, wrap
from .safe import guard_lines, one_line, printable
from .safe_markup import value

_STYLE = {"error": "bold red", "warning": "yellow", "info": "cyan"}
TextRenderer = Callable[[Any, Console], None]
_LAYOUTS: dict[str, TextRenderer] = {}
# kinds whose layout lives in a module of its own, imported the first time a report of the kind renders
KIND_MODULES = {
    "convert": "text_convert",
    "smoke": "text_smoke",
    "compat": "text_compat",
    "convert-gguf": "text_gguf",
    "diff": "text_diff",
    "audit": "text_audit",
    "accept": "text_accept",
    "config": "text_config",
}


def text_renderer(kind: str) -> Callable[[TextRenderer], TextRenderer]:
    """Register the text layout of a report kind (the generic one serves kinds without)."""

    def register(fn: TextRenderer) -> TextRenderer:
        _LAYOUTS[kind] = fn
        return fn

    return register


class SafeConsole(Console):
    """A console that shows control characters in printed text as escapes (report/safe.py); rich's
    own style codes travel as separate segments and pass. No printed line starts a workflow command.
    `verbose`: layouts that have a short and a full form (compat, inspect, audit) print the full one."""

    verbose: bool = False

    def _render_buffer(self, buffer: Any) -> str:
        return guard_lines(
            super()._render_buffer(
                s if s.control else Segment(printable(s.text), s.style, s.control) for s in buffer
            )
        )


def console(stream: IO[str], *, verbose: bool = False) -> Console:
    tty = stream.isatty() if hasattr(stream, "isatty") else False
    # emoji off: a `:name:` in a tensor name or message is text, not a picture (and rich's emoji table
    # stays unloaded); off a terminal the width is $COLUMNS or 100 (report/fit.py)
    out = SafeConsole(
        file=stream, highlight=False, soft_wrap=True, width=None if tty else columns(), emoji=False
    )
    out.verbose = verbose
    return out


def layout(kind: str) -> TextRenderer | None:
    """The text layout registered for `kind`, importing its module on first use."""
    if kind not in _LAYOUTS and kind in KIND_MODULES:
        importlib.import_module(f".{KIND_MODULES[kind]}", __package__)
    return _LAYOUTS.get(kind)


def render(report: Any, stream: IO[str], *, verbose: bool = False) -> None:
    (layout(getattr(report, "kind", "")) or render_generic)(report, console(stream, verbose=verbose))


def counts(findings: Any) -> dict[str, int]:
    return {s: sum(f.severity == s for f in findings) for s in ("error", "warning", "info")}


def render_findings(report: Any, out: Console) -> None:
    if not report.findings:
        out.print("[green]no findings[/green]")
        return
    table = Table(show_header=True, header_style="bold", expand=False)
    for col in ("code", "severity", "where", "message"):
        table.add_column(col, overflow="fold")
    for f in report.findings:
        where = f.field or f.tensor or f.file or ""
        # names and values come from the checkpoint: a tensor called "[/x]" must print, not parse as markup
        table.add_row(
            f.code + fix_marker(f),
            f"[{_STYLE[f.severity or 'info']}]{f.severity}[/]",
            value(where),
            value(f.message),
        )
    out.print(table)
    if any(f.fix is not None for f in report.findings):
        for line in wrap(FIX_LEGEND, out.width, hanging="    "):
            out.print(Text(line), soft_wrap=True)


FIX_LEGEND = "[*] fixable with --fix (see the change first with --diff); [~] with --fix --unsafe-fixes"


def render_verdict(report: Verdict, out: Console) -> None:
    c = counts(report.findings)
    verdict = "[red]FAILED[/red]" if report.failed() else "[green]passed[/green]"
    out.print(f"{verdict}: {c['error']} error(s), {c['warning']} warning(s), {c['info']} info")


def render_generic(report: Any, out: Console) -> None:
    out.print(f"[bold]{value(str(report.subject))}[/bold]")
    render_findings(report, out)
    render_verdict(report, out)


def headline(report: Any, files: bool) -> str:
    """subject: dialect, version (or what else it is), tensors [in N files], bytes read."""
    s = report.summary
    where = f" in {len(s.get('files', []))} file(s)" if files else ""
    return (
        f"{one_line(str(report.subject))}: {one_line(s.get('dialect') or '?')} dialect, "
        f"{one_line(str(s.get('version') or s.get('other_drafter') or 'not DFlash'))}, "
        f"{one_line(s['family']['label']) + ', ' if s.get('family') else ''}"
        f"{s.get('tensor_count', 0)} tensors{where}, {report.bytes_read:,} bytes read"
    )


def print_headline(text: str, out: Console) -> None:
    """A report's first line, bold, wrapped to the console's width (a long path continues indented)."""
    for line in wrap(text, out.width, hanging="  "):
        out.print(Text(line, style="bold"), soft_wrap=True)


@text_renderer("inspect")
def render_summary(report: Any, out: Console) -> None:
    s = report.summary
    print_headline(headline(report, files=True), out)
    geo = [(k, str(v)) for k, v in (s.get("geometry") or {}).items() if v is not None]
    if geo:
        # two key/value pairs a row where they fit: half the lines, every value still beside its key
        geo = [(value(k), value(v)) for k, v in geo]
        pairs = 2 if 2 * max(len(k) + len(v) + 7 for k, v in geo) <= out.width else 1
        t = Table(title="geometry", show_header=False, title_justify="left")
        half = -(-len(geo) // pairs)
        for n in range(half):
            t.add_row(*(x for p in range(pairs) if n + p * half < len(geo) for x in geo[n + p * half]))
        out.print(t)
    render_engine_tables(s, out)
    types = s.get("tensor_types")
    if types:  # GGUF: the storage type of every tensor
        t = Table(title="tensor types (GGUF)")
        for col in ("tensor", "HF name", "type", "shape", "bytes"):
            t.add_column(col, justify="right" if col == "bytes" else "left")
        for row in types:
            t.add_row(
                value(row["tensor"]),
                value(row["hf"] or "-"),
                value(row["type"]),
                value(row["shape"]),
                f"{row['bytes']:,} B",
            )
        out.print(t)
    comp = s.get("bytes_by_component")
    if comp:
        t = Table(title="bytes by component")
        t.add_column("component")
        t.add_column("bytes", justify="right")
        for k, v in comp.items():
            t.add_row(value(k), f"{v:,} B")
        out.print(t)
    q = s.get("quantization")
    if q:
        labels = ", ".join(sorted(set(q["modules"].values()))) or "-"
        out.print(
            f"quantized: {len(q['modules'])} module(s), {value(labels)} ({value(q['library'])}); "
            f"{q['stored_bytes']:,} B stored for {q['logical_bytes']:,} B bf16-equivalent, "
            f"ratio {q['compression_ratio']}"
        )
    if report.findings:
        render_findings(report, out)


@text_renderer("verify")
def render_verify(report: Any, out: Console) -> None:
    print_headline(headline(report, files=False), out)
    render_findings(report, out)
    render_engine_lines(report, out)
    render_verdict(report, out)


def render_engine_lines(report: Any, out: Console) -> None:
    """verify --engine: each named engine's verdict as compat gives it, with the codes of its reasons."""
    for v in (getattr(report, "extra", None) or {}).get("verdicts", []):
        reasons = [r["code"] for r in v["reasons"] if r["severity"] != "info"]
        why = f" ({', '.join(dict.fromkeys(reasons))}; `dflash2-ckpt compat` says why)" if reasons else ""
        out.print(f"{escape(v['engine'])} {escape(v['versions'])}: {v['verdict']}{why}")


def render_text(report: Any, out: Console, *, summary: bool = False) -> None:
    """A verify report on a console (library API kept for callers that hold a Console)."""
    (render_summary if summary else render_verify)(report, out)
    if summary:
        render_verdict(report, out)


@text_renderer("check")
def render_check(result: Any, out: Console) -> None:
    render_verify(result.verify, out)
    if result.smoke is None:
        return
    smoke_layout = layout(result.smoke.kind)  # report/text_smoke.py, loaded on first use
    assert smoke_layout is not None
    smoke_layout(result.smoke, out)


@text_renderer("hook")
def render_hook(run: Any, out: Console) -> None:
    """A hook run on a console the caller holds; the CLI writes the same lines without rich (text_hook.py)."""
    from .text_hook import concise_lines  # lazy: report.text_hook loads only on this path

    for line in concise_lines(run):
        out.print(line, markup=False, highlight=False, soft_wrap=True)


@text_renderer("push")
def render_push(result: Any, out: Console) -> None:
    render_check(result.check, out)
    for f in getattr(result, "card", ()):
        out.print(f"{f.severity:<7} {f.code} {f.name}: {value(f.message)}")
    if getattr(result, "dry_run", False) and result.refused_by is None:
        _render_plan(result, out)
        return
    if getattr(result, "created", False):
        out.print(f"created {value(result.repo)}")
    if result.uploaded:
        plan = getattr(result, "plan", None)
        if plan is not None:  # every file named: what went up, what went away, what stayed
            for verb, paths in (("uploaded", plan.upload), ("deleted", plan.delete), ("kept", plan.kept)):
                for p in paths:
                    out.print(f"{verb:<9} {value(p)}", highlight=False)
            out.print(
                f"{len(plan.upload)} uploaded, {len(plan.delete)} deleted, {len(plan.kept)} kept on the Hub"
            )
        out.print(f"uploaded: {value(str(result.pr_url or result.commit_url))}")
        for name in getattr(result, "excluded", ()):
            out.print(f"left out: {value(name)} (a pickle file; --include-pickles uploads it)")
    else:
        out.print(f"[red]refused by {result.refused_by}[/red]: nothing was uploaded to {value(result.repo)}")


def _render_plan(result: Any, out: Console) -> None:
    """push --dry-run: the card's diff, then each file with what the push would do to it."""
    if result.card_diff:
        out.print(escape(result.card_diff.rstrip("\n")), highlight=False, soft_wrap=True)
    elif result.card_diff is not None:
        out.print("README.md: same as on the Hub")
    plan = result.plan
    for verb, paths in (
        ("upload", plan.upload),
        ("delete", plan.delete),
        ("unchanged", plan.unchanged),
        ("keep", plan.kept),
    ):
        for p in paths:
            out.print(f"{verb:<9} {value(p)}", highlight=False)
    for name in getattr(result, "excluded", ()):
        out.print(f"left out: {value(name)} (a pickle file; --include-pickles uploads it)")
    for what in getattr(result, "unchecked", ()):
        out.print(f"not checked: {value(what)}", highlight=False)
    create = f"would create {value(result.repo)}; " if result.created else ""
    offline = "; nothing was compared with the Hub" if getattr(result, "unchecked", ()) else ""
    out.print(
        f"dry run: {create}{len(plan.upload)} to upload, {len(plan.delete)} to delete, "
        f"{len(plan.unchanged)} unchanged, {len(plan.kept)} kept; nothing was uploaded{offline}"
    )


def render_error(error: Mapping[str, Any], stream: IO[str], err_stream: IO[str]) -> None:
    err = console(err_stream)
    where = f"{error['path']}: " if error.get("path") else ""
    label = "refused" if error.get("exit_code") == 1 else "error"
    err.print(f"[bold red]{label}:[/] {value(where + str(error.get('message', '')))}")
    for f in error.get("findings") or ():
        err.print(f"  {f['code']} {f['severity']}: {value(str(f['message']))}")
    if error.get("hint"):
        err.print(f"  hint: {value(str(error['hint']))}")
