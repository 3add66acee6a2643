"""The light text paths print what rich printed: the hook's plain lines are the lines its rich layout
writes (control characters escaped, markup and `:emoji:` codes left as text), and rendering a verify
report in text loads no other kind's layout, no SARIF and no pydantic."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

from dflash2_ckpt.findings import Finding
from dflash2_ckpt.report import render
from dflash2_ckpt.report.text import console, render_hook
from dflash2_ckpt.usecases.hooks import HookRun
from dflash2_ckpt.usecases.verify import Report

ROOT = Path(__file__).resolve().parents[2]


def _run() -> HookRun:
    findings = (
        Finding("DF101", "hidden_size = [red]8[/red]: :fire: not\tan int\x1b[2J", field="hidden_size"),
        Finding("DF403", "no is_causal :warning: set it \u202e here", severity="warning"),
        Finding("DF116", "x is not a key the engines read; it is kept verbatim", field="x"),
    )
    part = Report(subject="drafters/a b[c]", summary={}, findings=findings, bytes_read=0)
    return HookRun(
        "config", False, (part,), skipped=(("tgt/:smile:", "not a drafter config (Qwen3); skipped"),)
    )


def test_hook_plain_lines_are_what_the_rich_layout_printed() -> None:
    plain = io.StringIO()
    render(_run(), "text", plain)
    rich_out = io.StringIO()
    render_hook(_run(), console(rich_out))
    assert plain.getvalue() == rich_out.getvalue()
    lines = plain.getvalue().splitlines()
    assert (
        lines[0]
        == "drafters/a b[c]/config.json:1:1: DF101 hidden_size = [red]8[/red]: :fire: not an int\\x1b[2J"
    )
    assert lines[1].endswith("set it \\u202e here (warning)")
    assert lines[-1] == "tgt/:smile:: not a drafter config (Qwen3); skipped"


def test_text_of_a_verify_report_loads_only_its_own_layout() -> None:
    code = (
        "import sys\nfrom dflash2_ckpt.report import render\nfrom dflash2_ckpt.usecases.verify import verify\n"
        "render(verify(sys.argv[1]), 'text')\n"
        "print(sorted(m for m in sys.modules if m.startswith(('dflash2_ckpt.report.', 'pydantic', 'dflash2_ckpt.audit', "
        "'dflash2_ckpt.accept.report', 'rich._emoji', 'gguf', 'numpy')) and '._' not in m))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, str(ROOT / "fixtures/good/nested-v2")],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert out.returncode == 0, out.stderr
    assert "no findings" in out.stdout
    loaded = eval(out.stdout.strip().splitlines()[-1])  # noqa: S307 - our own subprocess's repr of a list
    assert loaded == [
        "dflash2_ckpt.report.engine_tables",
        "dflash2_ckpt.report.fit",
        "dflash2_ckpt.report.safe",
        "dflash2_ckpt.report.safe_markup",
        "dflash2_ckpt.report.text",
    ]
