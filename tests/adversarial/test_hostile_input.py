"""Issue 22, hostile input: patterns, names and sizes an attacker controls end cleanly and quickly,
and nothing a checkpoint carries reaches a terminal or a CI log as a control sequence or a command.
Each class is built by tests/adversarial/hostile.py."""

from __future__ import annotations

import json
import re
from pathlib import Path
from urllib.parse import unquote

import hostile
import pytest
from adv_harness import run_limited

from _kit.cli import invoke_cli

# every hostile class through every header-level command, in a child process under memory and time limits
COMMANDS = ("verify", "inspect", "compat")
EXPECT = {
    "redos-lookahead-nested": "DF234",
    "redos-backref-nested": "DF234",
    "pattern-too-long": "DF234",
    "regexes-too-many": "DF234",
    "ignore-exact-100k": "DF229",
    "num-bits-string": "DF229",
    "mlx-bits-string": "DF229",
    "mlx-bits-string-override": "DF229",
    # compressed-tensors reads "no" as False: asymmetric, so the zero points are missing
    "symmetric-string": "DF222",
}


@pytest.mark.parametrize("cid", sorted(hostile.QUANT_CLASSES))
@pytest.mark.parametrize("command", COMMANDS)
def test_quant_class_ends_cleanly(cid: str, command: str, tmp_path: Path) -> None:
    d = hostile.QUANT_CLASSES[cid](tmp_path)
    code, report, err = run_limited([command, str(d)], timeout=30)
    assert code in (0, 1), (cid, command, code, err[-500:])
    if command == "verify":
        codes = {f["code"] for f in report["findings"]}
        if cid in EXPECT:
            assert EXPECT[cid] in codes, (cid, codes)
            assert code == 1
        else:
            assert "DF234" not in codes and "DF229" not in codes, (cid, codes)


def test_a_backtracking_ignore_pattern_is_evaluated_in_linear_time(tmp_path: Path) -> None:
    # `(a|a|a)*!` backtracks exponentially in Python's re on any module name; RE2 answers "no match"
    d = hostile.QUANT_CLASSES["redos-alternation"](tmp_path)
    code, report, err = run_limited(["verify", str(d)], timeout=20)
    unmatched = [f for f in report["findings"] if f["code"] == "DF226"]
    assert unmatched and "([a-z_.0-9]|[a-z_.0-9]|[a-z_.0-9])*!" in unmatched[0]["message"]


def test_a_pattern_not_evaluated_is_named_with_why(tmp_path: Path) -> None:
    d = hostile.QUANT_CLASSES["redos-lookahead-nested"](tmp_path)
    code, report, err = run_limited(["verify", str(d)], timeout=20)
    hit = [f for f in report["findings"] if f["code"] == "DF234"]
    assert len(hit) == 1 and hit[0]["details"]["pattern"] == "re:(?=l)([a-z_.0-9]|[a-z_.0-9])*!"
    assert "exponential" in hit[0]["message"]


def test_lookahead_patterns_without_nesting_still_match_like_the_library() -> None:
    from dflash2_ckpt.quant.config import ct_match

    assert ct_match("layers.0.mlp", "Linear", "re:(?!fc).*") is True
    assert ct_match("fc", "Linear", "re:(?!fc).*") is False
    assert ct_match("fc", "Linear", "re:(a+)+$") is False  # RE2: no match, no hang
    assert ct_match("a" * 100_000, "Linear", "re:(a+)+$") is True


def test_symmetric_no_is_asymmetric_as_the_library_reads_it(tmp_path: Path) -> None:
    ct = pytest.importorskip("compressed_tensors.quantization")
    assert ct.QuantizationArgs(num_bits=4, symmetric="no").symmetric is False  # the library's own reading
    d = hostile.QUANT_CLASSES["symmetric-string"](tmp_path)
    code, report, err = run_limited(["verify", str(d)], timeout=30)
    assert code == 1 and any("w4a16-asym" in f["message"] for f in report["findings"] if f["code"] == "DF222")


def test_diff_refuses_a_quantized_side_the_library_cannot_decompress(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    d = hostile.QUANT_CLASSES["symmetric-string"](tmp_path)
    from dflash2_ckpt.cli import main

    res = invoke_cli(main, ["diff", str(d), "-r", str(hostile.GOOD / "nested-v2"), "--format", "json"])
    code, report = res.exit_code, json.loads(res.output)
    assert code == 3 and report["error"]["message"].startswith("cannot dequantize: DF222"), report
    assert report["error"]["type"] == "ConfigError"


# ---------------------------------------------------------------- sizes under the caps (item 11)

SIZE_EXPECT = {
    "taps-5m": ("DF101", "entries"),
    "tensors-1m": ("DF603", "tensors"),
    "ignore-exact-1m": ("DF101", "entries"),
}


@pytest.mark.parametrize("cid", sorted(hostile.SIZE_CLASSES))
def test_huge_lists_under_the_byte_caps_are_refused_in_bounded_time_and_memory(
    cid: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import time

    import adv_harness

    # the inputs are 30-60 MB; parsing them is allowed (memory proportional to the input), building
    # objects per entry (gigabytes) is not
    monkeypatch.setattr(adv_harness, "MEMORY_LIMIT", 1 << 30)
    d = hostile.SIZE_CLASSES[cid](tmp_path)
    t0 = time.monotonic()
    # before: 6.1 GB / 59 s (5M taps), 2.8 GB / 67 s (1M tensors), 56 s (1M ignore entries)
    code, report, err = run_limited(["verify", str(d)], timeout=60)
    took = time.monotonic() - t0
    code_, words = SIZE_EXPECT[cid]
    hits = [f for f in report["findings"] if f["code"] == code_]
    assert code == 1 and hits and any(words in f["message"] for f in hits), (cid, report.get("findings"))
    assert took < 30, took


# ---------------------------------------------------------------- output channels (items 5 and 6)

COMMAND_LINE = re.compile(r"^::(error|warning|notice)( [^:]*)?::")


def _github_lines(out: str) -> list[str]:
    return out.split("\n")


@pytest.mark.parametrize("name", [hostile.WORKFLOW_INJECTION, hostile.STOP_COMMANDS, "##[error]legacy"])
def test_github_format_writes_no_command_a_directory_name_carries(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from dflash2_ckpt.cli import main

    hostile.named(tmp_path, name)
    monkeypatch.chdir(tmp_path)  # the subject is the bare name: the verdict line starts with it
    res = invoke_cli(main, ["verify", name, "--format", "github"])
    lines = res.output.split("\n")
    # the runner takes a line as a command when it starts with `::` (after spaces), or holds `##[` anywhere
    commands = [x for x in lines if x.lstrip().startswith("::")]
    assert all(COMMAND_LINE.match(x) and "evil" not in x.split("::")[1] for x in commands), commands
    assert not any("##[" in x for x in lines), lines
    verdict = [x for x in lines if ": passed: " in x]
    assert len(verdict) == 1 and "\n" not in verdict[0]


def test_terminal_escapes_in_a_tensor_name_never_reach_the_output(tmp_path: Path) -> None:
    from dflash2_ckpt.cli import main

    d = hostile.extra_tensor(tmp_path, "evil" + hostile.TERMINAL_ESCAPES)
    for fmt in ("text", "github"):
        for cmd in ("verify", "inspect"):
            res = invoke_cli(main, [cmd, str(d), "--format", fmt])
            assert "\x1b" not in res.output and "\x07" not in res.output and "\u202e" not in res.output, (
                cmd,
                fmt,
            )
            if cmd == "verify":  # the DF202 finding names the tensor, escapes shown
                assert "evil\\x1b[2J\\x1b]0;pwned" in res.output, (cmd, fmt, res.output[-300:])


def test_sarif_uri_is_percent_encoded(tmp_path: Path) -> None:
    from dflash2_ckpt.cli import main

    d = hostile.named(tmp_path, "my drafter\nx")
    (d / "extra.bin").write_bytes(b"not a pickle")  # a finding that sits on a file
    res = invoke_cli(main, ["verify", str(d), "--format", "sarif"])
    doc = json.loads(res.output)
    uris = [
        loc["physicalLocation"]["artifactLocation"]["uri"]
        for r in doc["runs"][0]["results"]
        for loc in r["locations"]
    ]
    assert uris
    for uri in uris:
        assert " " not in uri and "\n" not in uri, uri
        assert "my drafter\nx" in unquote(uri)


def test_markdown_cells_survive_carriage_returns() -> None:
    from dflash2_ckpt.report.audit import _md_cell

    cell = _md_cell("a\rb\r\nc|d\x1b[2J")
    assert "\r" not in cell and "\n" not in cell and "\x1b" not in cell and "\\|" in cell


def test_audit_keeps_producing_rows_around_a_backtracking_pattern(tmp_path: Path) -> None:
    # before: one such drafter stalled the whole audit (no table after 150 s)
    import time

    dirs = [
        str(hostile.QUANT_CLASSES[c](tmp_path / c))
        for c in ("redos-alternation", "redos-lookahead-nested", "redos-nested-plus")
    ]
    good = str(hostile.GOOD / "nested-v2")
    t0 = time.monotonic()
    code, report, err = run_limited(["audit", good, *dirs, good], timeout=60)
    assert time.monotonic() - t0 < 45
    assert code in (0, 1), (code, err[-800:])
    rows = report["rows"]
    assert len(rows) == 4 and all(r["error"] is None and r["dialect"] == "nested" for r in rows), rows
    assert "DF234" in {f["code"] for f in rows[2]["findings"]}, rows[2]["findings"]


def test_the_library_reports_an_unevaluated_pattern_in_process(tmp_path: Path) -> None:
    # the child-process runs above prove the bound; this one is the library call a runtime author makes
    import dflash2_ckpt

    d = hostile.QUANT_CLASSES["redos-lookahead-nested"](tmp_path)
    report = dflash2_ckpt.verify(str(d))
    hit = [f for f in report.findings if f.code == "DF234"]
    assert len(hit) == 1 and report.failed()


@pytest.mark.parametrize("cid", sorted(hostile.QUANT_CLASSES))
def test_diff_of_a_hostile_quantization_config_ends_in_a_typed_answer(cid: str, tmp_path: Path) -> None:
    """diff dequantizes through compressed-tensors, whose validation errors used to surface as internal
    errors: every class ends in a report or a typed error naming the finding, in-process (torch does not
    import under the child-process memory limit)."""
    from dflash2_ckpt.cli import main

    d = hostile.QUANT_CLASSES[cid](tmp_path)
    reference = Path(__file__).resolve().parents[2] / "fixtures" / "good" / "nested-v2"
    r = invoke_cli(main, ["diff", str(d), "--reference", str(reference), "--format", "json"])
    doc = json.loads(r.output)
    assert r.exit_code in (0, 1, 3), (cid, r.exit_code, doc)
    if r.exit_code == 3:
        assert doc["error"]["label"] != "internal error" and doc["error"]["type"] in (
            "ConfigError",
            "SourceError",
        ), (cid, doc["error"])
    if cid in EXPECT and EXPECT[cid] in ("DF234", "DF229", "DF222"):
        assert r.exit_code == 3 and EXPECT[cid] in doc["error"]["message"], (cid, doc)
