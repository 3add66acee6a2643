"""Text layout of a `compat` report, answer first: a line that says where it loads, one line per engine
(its newest checked release: the verdict, and the serve command where it loads), then the findings behind
each verdict that is not `loads`, one each. `--verbose` adds every release with its citations (json and
sarif always carry everything)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rich.console import Console
from rich.text import Text

from .fit import command_lines, without_citations, wrap
from .safe import one_line
from .text import text_renderer

VERDICT_STYLE = {
    "loads": "green",
    "degraded": "yellow",
    "fails": "bold red",
    "needs-conversion": "cyan",
    "unsupported": "dim",
    "not-validated": "magenta",
    "unverified": "magenta",
}
_SERVED = ("loads", "degraded")


def newest(verdicts: Sequence[Any]) -> list[Any]:
    """The verdict of each engine's newest checked release (profiles are oldest first within an engine)."""
    last: dict[str, Any] = {}
    for v in verdicts:
        last[v.profile.engine] = v
    return list(last.values())


def explained(v: Any) -> list[str]:
    """The reasons a person reads for a verdict: none for a clean `loads` (its notes are info), else each
    reason without its citations, less one that another reason already says in full."""
    shown = [
        without_citations(one_line(f"{x.code} {x.message}"))
        for x in v.reasons
        if x.severity != "info" or v.verdict != "loads"
    ]
    return [
        m
        for i, m in enumerate(shown)
        if not any(
            i != j and m[6:] in other and (len(other) > len(m) or j < i) for j, other in enumerate(shown)
        )
    ]


def headline(r: Any, shown: Sequence[Any]) -> str:
    family = f", {one_line(r.family['label'])}" if getattr(r, "family", None) else ""
    what = f"{one_line(r.dialect or '?')} dialect, {one_line(r.version or 'not DFlash')}{family}"
    loads = sum(v.verdict == "loads" for v in shown)
    scope = "named engine releases" if r.named else "engines"
    answer = f"loads in {loads} of {len(shown)} {scope}" if loads else f"no {scope} load it"
    return f"{answer}: {one_line(r.path)} ({what})"


def title(v: Any) -> str:
    """The engine and the releases whose code was read, not the range the profile is applied to:
    `vLLM 0.33.0-0.34.0 checked`; with a version named, `vLLM 9.0.0 (0.34.0 checked)`."""
    return one_line(f"{v.profile.label} {_versions(v)}")


def reason_line(v: Any, message: str) -> str:
    """A reason as one entry: its message names the engine release already, else it is put in front."""
    code, _, text = message.partition(" ")
    return message if text.startswith(v.profile.title) else f"{code} {v.profile.title}: {text}"


def _line(out: Console, text: str, style: str | None = None) -> None:
    out.print(Text(text, style=style or ""), soft_wrap=True)


def _versions(v: Any) -> str:
    """The releases whose code was read, not the range the profile is applied to: `0.33.0-0.34.0 checked`;
    with the version named, `9.0.0 (0.33.0 checked)`."""
    checked = v.checked
    shown = checked.label if checked is not None else v.profile.versions.label
    return f"{v.asked} ({shown})" if v.asked else shown


def checked_edges(verdicts: Any) -> str:
    """Each engine's checked edge, once: versions outside it are judged as the nearest checked release."""
    from ..engines.checked import engine_span  # lazy: engines.checked loads only on this path
    from ..engines.registry import by_engine  # lazy: engines.registry loads only on this path

    parts = []
    for engine, label in dict.fromkeys((v.profile.engine, v.profile.label) for v in verdicts):
        whole = engine_span(by_engine(engine))
        if whole is not None:
            parts.append(f"{label} {whole.first}" + (f"-{whole.last}" if whole.last != whole.first else ""))
    return (
        "releases checked: " + ", ".join(parts) + ". A version outside is judged as the nearest checked "
        "release; --engine NAME@VERSION says so (DF816)"
    )


@text_renderer("compat")
def render_compat(r: Any, out: Console) -> None:
    width = out.width
    shown = list(r.verdicts) if r.named else newest(r.verdicts)
    for line in wrap(headline(r, shown), width, hanging="  "):
        _line(out, line, "bold")
    labels = [title(v) for v in shown]
    pad = min(max(map(len, labels), default=0), width // 2)
    for v, label in zip(shown, labels):
        first = f"  {label:<{pad}}  " if len(label) <= pad else f"  {label}\n  {'':<{pad}}  "
        out.print(Text(first) + Text(v.verdict, style=VERDICT_STYLE.get(v.verdict, "")), soft_wrap=True)
        if v.serve and v.verdict in _SERVED:
            for line in command_lines(v.serve, width, "      "):
                _line(out, line)
    # a verdict that loads is explained too where a warning stands beside it (DF816: an unchecked release)
    why = [reason_line(v, m) for v in shown for m in explained(v)]
    if why:
        _line(out, "why:", "bold")
    for m in why:
        for line in wrap(m, width, indent="  ", hanging="      "):
            _line(out, line)
    if getattr(out, "verbose", False):
        _history(r, out)
    elif not r.named and len(shown) < len(r.verdicts):
        more = len(r.verdicts) - len(shown)
        for line in wrap(
            f"each engine's newest checked release; {more} older releases and the citations: --verbose", width
        ):
            _line(out, line, "dim")
    if not r.named:
        for line in wrap(checked_edges(r.verdicts), width, hanging="  "):
            _line(out, line, "dim")
    # the last line agrees with the exit code: FAILED only when compat exits 1
    scope = "every engine named" if r.named else "at least one engine"
    word = Text("FAILED", style="red") if r.failed() else Text("passed", style="green")
    for i, line in enumerate(
        wrap(
            f": {sum(v.verdict == 'loads' for v in r.verdicts)} of {len(r.verdicts)} "
            f"engine release(s) load it (passes when {scope} loads it)",
            width - 6,
        )
    ):
        out.print((word + Text(line)) if i == 0 else Text("  " + line), soft_wrap=True)


def _history(r: Any, out: Console) -> None:
    """Every release checked, oldest first within an engine: its verdict, the full reasons (citations
    included) and the serve command where it loads."""
    _line(out, "every checked release:", "bold")
    for v in r.verdicts:
        out.print(
            Text(f"  {title(v)}  ") + Text(v.verdict, style=VERDICT_STYLE.get(v.verdict, "")), soft_wrap=True
        )
        for x in v.reasons:
            if x.severity != "info" or v.verdict != "loads":
                for line in wrap(
                    one_line(f"{x.code} {x.message}"), out.width, indent="      ", hanging="        "
                ):
                    _line(out, line)
        if v.serve and v.verdict in _SERVED:
            for line in command_lines(v.serve, out.width, "      "):
                _line(out, line)
