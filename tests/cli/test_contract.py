"""The machine-output contract, command by command and outcome by outcome: with --format json stdout is
exactly one JSON document (an error document on exits 2 and 3); sarif and github keep to their shape too."""

from __future__ import annotations

from pathlib import Path

import pytest

from _kit import extras
from _kit.cli import one_json, run
from conftest import FIXTURES

GOOD = str(FIXTURES / "good" / "nested-v2")
BROKEN = str(FIXTURES / "broken" / "fc-wrong-shape")
TRUNCATED = str(FIXTURES / "broken" / "header-truncated")
MASK = str(FIXTURES / "broken" / "mask-id-out-of-vocab")
PAIR = FIXTURES / "pairs" / "tiny"
# accept's finished outcomes need its extra and the tiny pair; its usage and cannot-run ones hold without
ACCEPT_RUNS = not extras.missing("accept") and (PAIR / "drafter").is_dir()


def cases(tmp: Path) -> list[tuple[list[str], int]]:
    out = str(tmp / "out")
    return [
        (["verify", GOOD], 0),
        (["verify", BROKEN], 1),
        (["verify", GOOD, "--select", "DF999"], 2),
        (["verify", GOOD, "--bogus"], 2),
        (["verify", str(tmp / "missing")], 3),
        (["compat", GOOD], 0),
        (["compat", GOOD, "--engine", "vllm@0.28.0"], 1),
        (["compat", GOOD, "--engine", "vllm@0.28.1"], 2),
        (["compat", str(tmp / "missing")], 3),
        (["inspect", GOOD], 0),
        (["inspect", GOOD, "--bogus"], 2),
        (["inspect", TRUNCATED], 3),
        (["inspect", str(tmp / "missing")], 3),
        (
            [
                "convert",
                GOOD,
                "-o",
                out,
                "--to",
                "flat",
                "--verifier-name",
                "a/b",
                "--verifier-arch",
                "Qwen3ForCausalLM",
                "--dry-run",
            ],
            0,
        ),
        (
            [
                "convert",
                BROKEN,
                "-o",
                out,
                "--to",
                "flat",
                "--verifier-name",
                "a/b",
                "--verifier-arch",
                "Qwen3ForCausalLM",
            ],
            1,
        ),
        (["convert", GOOD, "-o", out, "--to", "flat"], 2),
        (["convert", GOOD, "-o", out, "--to", "sideways"], 2),
        (
            [
                "convert",
                GOOD,
                "-o",
                GOOD + "/inner",
                "--to",
                "flat",
                "--verifier-name",
                "a/b",
                "--verifier-arch",
                "Qwen3ForCausalLM",
            ],
            2,
        ),
        (["convert", str(tmp / "missing"), "-o", out, "--to", "flat"], 3),
        (["smoke", GOOD, "--block-size", "1"], 2),
        (["smoke", str(tmp / "missing")], 3),
        (["push", BROKEN, "org/name"], 1),
        (["push", GOOD, "not a repo"], 3),
        (["push", GOOD], 2),
        (["hook", "verify", GOOD + "/config.json"], 0),
        (["hook", "config", MASK + "/config.json", GOOD], 1),
        (["hook", "verify", GOOD + "/config.json", "--ignore", "XX"], 2),
        (["hook", "verify", str(tmp / "gone" / "config.json")], 3),
        (["diff", str(FIXTURES / "quantized" / "w4a16"), "--reference", GOOD], 0),
        (["diff", str(FIXTURES / "broken" / "quant-random-fc"), "--reference", GOOD], 1),
        (["diff", GOOD], 2),
        (["diff", str(tmp / "missing"), "--reference", GOOD], 3),
        (["audit", GOOD, "--engine", "vllm"], 0),
        (["audit", GOOD, BROKEN], 1),
        (["audit", GOOD, "--jobs", "0"], 2),
        (["audit", str(tmp / "missing")], 3),
        (["accept", GOOD, "--target", str(PAIR / "target"), "--expect", "fast"], 2),
        (["accept", str(tmp / "missing"), "--target", str(PAIR / "target")], 3),
    ] + (
        [
            (
                [
                    "accept",
                    str(PAIR / "drafter"),
                    "--target",
                    str(PAIR / "target"),
                    "--limit",
                    "1",
                    "--max-new-tokens",
                    "4",
                ],
                0,
            ),
            (
                [
                    "accept",
                    str(PAIR / "drafter"),
                    "--target",
                    str(PAIR / "target"),
                    "--limit",
                    "1",
                    "--max-new-tokens",
                    "4",
                    "--expect",
                    "0.5+-0.1",
                ],
                1,
            ),
        ]
        if ACCEPT_RUNS
        else []
    )


N = len(cases(Path("/x")))


def test_every_command_is_covered() -> None:
    from dflash2_ckpt.cli import COMMANDS

    reporting = {c for c in COMMANDS if c not in ("schema", "codes", "config", "engines")}  # listings
    assert reporting <= {args[0] for args, _ in cases(Path("/x"))}


@pytest.mark.parametrize("i", range(N))
@pytest.mark.parametrize("fmt", ["json", "sarif"])
def test_one_document_in_every_outcome(tmp_path: Path, i: int, fmt: str) -> None:
    args, want = cases(tmp_path)[i]
    code, out, _ = run(*args, "--format", fmt)
    assert code == want, (args, out)
    doc = one_json(out)
    if fmt == "json" and want in (2, 3):
        assert set(doc) - {"refused"} == {"error"} and {"type", "message", "hint"} <= set(doc["error"])
        assert doc["error"]["exit_code"] == want
    if fmt == "sarif":
        assert doc["version"] == "2.1.0"
        assert doc["runs"][0]["invocations"][0]["executionSuccessful"] is (want in (0, 1))


@pytest.mark.parametrize("i", range(N))
def test_github_format_is_annotations_and_one_verdict(tmp_path: Path, i: int) -> None:
    args, want = cases(tmp_path)[i]
    code, out, _ = run(*args, "--format", "github")
    assert code == want
    lines = out.splitlines()
    if want in (2, 3):
        assert len(lines) == 1 and lines[0].startswith("::error ")
    elif want == 1 and args[0] == "convert":  # a refusal: its findings, then the refusal
        assert lines and all(x.startswith(("::error ", "::warning ", "::notice ")) for x in lines)
    else:
        assert all(x.startswith(("::error ", "::warning ", "::notice ")) for x in lines[:-1])


OUTPUT_COMMANDS = ("verify", "compat", "diff", "accept", "audit", "hook")


def test_output_is_offered_by_every_listed_command() -> None:
    from dflash2_ckpt.cli import main

    for name in OUTPUT_COMMANDS[:-1]:
        assert "outputs" in {p.name for p in main.get_command(None, name).params}, name  # type: ignore[union-attr]


@pytest.mark.parametrize("i", [i for i, (a, _) in enumerate(cases(Path("/x"))) if a[0] in OUTPUT_COMMANDS])
def test_each_output_file_keeps_the_contract(tmp_path: Path, i: int) -> None:
    """One run, text on the terminal, and every --output FORMAT=FILE holding its format's one document."""
    args, want = cases(tmp_path)[i]
    files = {f: tmp_path / f"report.{f}" for f in ("json", "sarif", "github")}
    extra = [x for f, p in files.items() for x in ("--output", f"{f}={p}")]
    code, out, _ = run(*args, *extra)
    assert code == want, (args, out)
    doc = one_json(files["json"].read_text())
    if want in (2, 3):
        assert set(doc) - {"refused"} == {"error"} and doc["error"]["exit_code"] == want
    else:
        assert "error" not in doc
    sarif = one_json(files["sarif"].read_text())
    assert sarif["version"] == "2.1.0"
    assert sarif["runs"][0]["invocations"][0]["executionSuccessful"] is (want in (0, 1))
    lines = files["github"].read_text().splitlines()
    assert lines and all(x.startswith(("::error ", "::warning ", "::notice ")) for x in lines[:-1])
    if want in (2, 3):
        assert len(lines) == 1 and lines[0].startswith("::error ")
    assert not out.lstrip().startswith(("{", "::"))  # the terminal still got text


def test_output_format_must_be_known(tmp_path: Path) -> None:
    code, _, err = run("verify", GOOD, "--output", f"yaml={tmp_path / 'r.yaml'}")
    assert code == 2 and "FORMAT=FILE" in err and not (tmp_path / "r.yaml").exists()


def test_audit_keeps_its_bare_output_file(tmp_path: Path) -> None:
    page, doc = tmp_path / "audit.html", tmp_path / "audit.json"
    code, out, _ = run(
        "audit", GOOD, "--engine", "vllm", "--format", "html", "-o", str(page), "--output", f"json={doc}"
    )
    assert code == 0 and out == ""
    assert page.read_text().lstrip().lower().startswith("<!doctype html")
    assert one_json(doc.read_text())["rows"][0]["input"] == GOOD
