"""`--format github`: GitHub Actions workflow commands, one annotation per finding.

`::error file=F,line=N,title=DF201 tensor-missing::message`; warnings as `::warning`, info as `::notice`.
Escaping follows the runner's workflow-command rules (actions/toolkit, command.ts): % CR LF in the
message; also : and , in property values. Every line written goes through the same escaping, the
closing verdict line included, and none may start with `::`: a directory or Hub subfolder named
`x\n::error ...` or `::stop-commands::...` must print, not run. Control characters show as escapes.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import IO, Any

from ..findings import Verdict
from .locate import locate_all, refusal
from .safe import printable

COMMAND = {"error": "error", "warning": "warning", "info": "notice"}


def escape_data(s: str) -> str:
    return printable(s, keep_cr_lf=True).replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def plain_line(s: str) -> str:
    """A line that is not a workflow command: escaped like command data, a leading `::` broken, and the
    legacy `##[command]` form (which the runner finds anywhere in a line) broken too."""
    line = escape_data(s).replace("##[", "##%5B")
    stripped = line.lstrip()
    if stripped.startswith("::"):
        line = line[: len(line) - len(stripped)] + "%3A" + stripped[1:]
    return line


def escape_property(s: str) -> str:
    return escape_data(s).replace(":", "%3A").replace(",", "%2C")


def annotation(level: str, message: str, **props: Any) -> str:
    fields = ",".join(f"{k}={escape_property(str(v))}" for k, v in props.items() if v is not None)
    return f"::{level}{' ' + fields if fields else ''}::{escape_data(message)}"


def _annotations(report: Any, stream: IO[str]) -> None:
    for f, loc in locate_all(report):
        stream.write(
            annotation(
                COMMAND[f.severity or "info"],
                f.message,
                file=loc.uri,
                line=loc.line,
                title=f"{f.code} {f.name}",
            )
            + "\n"
        )


def render(report: Verdict, stream: IO[str]) -> None:
    findings = list(report.findings)
    _annotations(report, stream)
    counts = {s: sum(f.severity == s for f in findings) for s in ("error", "warning", "info")}
    # the verdict the exit code gives, and only that (an audit fails on a drafter no engine loads without
    # an error finding; compat without --engine passes while some engine loads it)
    verdict = "FAILED" if report.failed() else "passed"
    stream.write(
        plain_line(
            f"{report.subject}: {verdict}: {counts['error']} error(s), {counts['warning']} "
            f"warning(s), {counts['info']} info"
        )
        + "\n"
    )


def render_error(error: Mapping[str, Any], stream: IO[str], err_stream: IO[str]) -> None:
    refused = refusal(error)
    if refused is not None:
        _annotations(refused, stream)
    text = str(error.get("message", ""))
    if error.get("hint"):
        text += f" (hint: {error['hint']})"
    stream.write(
        annotation("error", text, file=error.get("path"), title=f"dflash2-ckpt: {error.get('type')}") + "\n"
    )
