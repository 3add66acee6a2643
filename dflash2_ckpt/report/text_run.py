"""The text layout shared by the reports of a run (smoke, accept): a title line, indented facts, the
findings one entry each, and the result; every line wrapped to the console's width under its own indent.
A report kind gives only its own facts (report/text_smoke.py, report/text_accept.py)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

from rich.console import Console
from rich.text import Text

from .fit import wrap
from .safe import one_line
from .text import text_renderer


def threads_line(r: Any, extra: str = "") -> list[str]:
    """`torch threads N (why)` when the run chose them."""
    t = getattr(r, "threads", None)
    return [f"  torch threads {t['threads']} ({t['reason']}){extra}"] if t else []


def finding_lines(findings: Iterable[Any]) -> list[str]:
    """One entry per finding: severity, code, name, the tensor where it has one, the message."""
    return [
        f"  {f.severity:<7} {f.code} {f.name}"
        f"{f' [{one_line(f.tensor)}]' if getattr(f, 'tensor', None) else ''}: {one_line(f.message)}"
        for f in findings
    ]


def closing_lines(r: Any) -> list[str]:
    return [*finding_lines(r.findings), "  result: " + ("passed" if r.passed else "FAILED")]


def print_lines(lines: Sequence[str], out: Console) -> None:
    """Each line within the console's width, its continuation four columns under its own indent; text,
    never markup (labels and messages come from checkpoints and prompts)."""
    for line in lines:
        lead = line[: len(line) - len(line.lstrip(" "))]
        for part in wrap(line.strip(), out.width, indent=lead, hanging=lead + "    "):
            out.print(Text(part), soft_wrap=True)


def run_renderer(kind: str, lines: Callable[[Any], list[str]]) -> None:
    """Register `lines` (the report's own lines, its closing ones included) as the text layout of `kind`."""
    text_renderer(kind)(lambda r, out: print_lines(lines(r), out))
