"""The publisher's path under attack and under careless use, through the CLI: every file the tool writes
goes through one guard (no symbolic link, no hard-linked file, no input of the run: exit 2 and the path,
nothing changed), push deletes only what it listed and was told to, --fix keeps every number's text and
rewrites only a header, and each command exits as it prints."""

from __future__ import annotations

import json
import os
import shutil
import struct
import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from _kit.cli import run_output as run
from _kit.fakehub import FakeHub
from conftest import FIXTURES

NESTED = FIXTURES / "good" / "nested-v2"
TARGET = FIXTURES / "targets" / "tiny-target"


def _files(d: Path) -> dict[str, bytes]:
    return {p.relative_to(d).as_posix(): p.read_bytes() for p in sorted(d.rglob("*")) if p.is_file()}


def _copy(src: Path, dest: Path) -> Path:
    return Path(shutil.copytree(src, dest))


def _plant(kind: str, link: Path, victim: Path) -> None:
    if kind == "symlink":
        link.symlink_to(victim)
    else:
        os.link(victim, link)


# ---- 1. one write guard, every command that writes, each kind of link ----------------------------------

Case = Callable[[Path, str], tuple[list[str], Path, Path]]  # -> argv, the destination given, the victim


def _output(tmp: Path, kind: str) -> tuple[list[str], Path, Path]:
    d = _copy(NESTED, tmp / "d")
    victim = d / "config.json"
    dest = victim if kind == "input" else tmp / "report.json"
    if kind != "input":
        _plant(kind, dest, victim)
    return ["verify", str(d), "--output", f"json={dest}"], dest, victim


def _receipt(tmp: Path, kind: str) -> tuple[list[str], Path, Path]:
    ref, derived = _copy(NESTED, tmp / "ref"), _copy(NESTED, tmp / "derived")
    if kind == "input":
        victim = dest = ref / "config.json"
    else:
        victim, dest = derived / "model.safetensors", tmp / "receipt.json"
        _plant(kind, dest, victim)
    return ["diff", str(derived), "--reference", str(ref), "--receipt", str(dest)], dest, victim


def _fix(tmp: Path, kind: str) -> tuple[list[str], Path, Path]:
    d = _copy(FIXTURES / "broken" / "engines-split-causality", tmp / "d")
    victim = d / "kept.json"  # inside: a link that leaves the directory is refused when read
    shutil.move(str(d / "config.json"), victim)
    _plant(kind, d / "config.json", victim)
    return ["verify", str(d), "--fix"], d / "config.json", victim


def _fix_header(tmp: Path, kind: str) -> tuple[list[str], Path, Path]:
    d = _copy(FIXTURES / "broken" / "tensor-model-prefix", tmp / "d")
    victim = d / "kept.bin"
    shutil.move(str(d / "model.safetensors"), victim)
    _plant(kind, d / "model.safetensors", victim)
    return ["verify", str(d), "--fix"], d / "model.safetensors", victim


def _convert_dir(tmp: Path, kind: str) -> tuple[list[str], Path, Path]:
    target = _copy(TARGET, tmp / "target")
    if kind == "input":  # the output directory is the target directory: --force would replace it
        argv = ["convert", str(NESTED), "-o", str(target), "--target", str(target), "--to", "flat", "--force"]
        return argv, target, target / "tokenizer.json"
    elsewhere = _copy(TARGET, tmp / "elsewhere")
    (tmp / "out").symlink_to(elsewhere)
    return (
        ["convert", str(NESTED), "-o", str(tmp / "out"), "--target", str(target), "--to", "flat", "--force"],
        tmp / "out",
        elsewhere / "tokenizer.json",
    )


def _convert_gguf(tmp: Path, kind: str) -> tuple[list[str], Path, Path]:
    target = _copy(TARGET, tmp / "target")
    if kind == "input":
        dest = target / "drafter.gguf"  # inside the target directory
        victim = target / "tokenizer.json"
    else:
        victim, dest = tmp / "precious.gguf", tmp / "out.gguf"
        victim.write_bytes(b"precious")
        _plant(kind, dest, victim)
    return (
        ["convert", str(NESTED), "-o", str(dest), "--target", str(target), "--to", "gguf", "--force"],
        dest,
        victim,
    )


def _schemas(tmp: Path, kind: str) -> tuple[list[str], Path, Path]:
    out = tmp / "schemas"
    out.mkdir()
    victim = tmp / "precious.json"
    victim.write_text("{}")
    _plant(kind, out / "nested-v2.schema.json", victim)
    return ["schema", "--write", str(out)], out / "nested-v2.schema.json", victim


WRITERS: dict[str, tuple[Case, tuple[str, ...]]] = {
    "verify --output": (_output, ("symlink", "hardlink", "input")),
    "diff --receipt": (_receipt, ("symlink", "hardlink", "input")),
    "verify --fix (config)": (_fix, ("symlink", "hardlink")),
    "verify --fix (header)": (_fix_header, ("symlink", "hardlink")),
    "convert -o DIR": (_convert_dir, ("symlink", "input")),
    "convert --to gguf": (_convert_gguf, ("symlink", "hardlink", "input")),
    "schema --write": (_schemas, ("symlink", "hardlink")),
}


@pytest.mark.parametrize("writer,kind", [(w, k) for w, (_, kinds) in WRITERS.items() for k in kinds])
def test_no_command_writes_through_a_link_or_onto_an_input(tmp_path: Path, writer: str, kind: str) -> None:
    argv, dest, victim = WRITERS[writer][0](tmp_path, kind)
    before = victim.read_bytes()
    code, out = run(*argv)
    assert code == 2, out
    assert str(dest.name) in out and "Traceback" not in out, out
    assert victim.read_bytes() == before
    leftovers = [
        p.name for p in dest.parent.iterdir() if ".dflash2-ckpt-" in p.name or "dflash2-tmp" in p.name
    ]
    assert leftovers == []


def test_a_report_never_replaces_a_file_of_the_target_directory(tmp_path: Path) -> None:
    target = _copy(TARGET, tmp_path / "target")
    (target / "NOTES.md").write_text("mine")
    code, out = run("verify", str(NESTED), "--target", str(target), "--output", f"json={target / 'NOTES.md'}")
    assert code == 2 and "a directory this command reads" in out, out
    assert (target / "NOTES.md").read_text() == "mine"
    code, out = run("verify", str(NESTED), "--target", str(target), "--output", f"json={tmp_path / 'r.json'}")
    assert code in (0, 1) and json.loads((tmp_path / "r.json").read_text())["summary"]


@pytest.mark.parametrize("kind", ["symlink", "hardlink"])
def test_push_never_writes_through_a_planted_temporary_name(hub: FakeHub, tmp_path: Path, kind: str) -> None:
    """`.README.md.dflash2-ckpt.tmp -> config.json`: the card goes to a private temporary file and README.md;
    config.json, on disk and on the Hub, is the drafter's own."""
    d = _copy(NESTED, tmp_path / "d")
    config = (d / "config.json").read_bytes()
    _plant(kind, d / ".README.md.dflash2-ckpt.tmp", d / "config.json")
    hub.add_commit("org/dest", {"LICENSE": b"mit"}, granted={"hf_granted"})
    code, out = run("push", str(d), "org/dest", "--token", "hf_granted")
    assert code == 0, out
    assert (d / "config.json").read_bytes() == config
    files = hub.repos["org/dest"].commits[hub.repos["org/dest"].refs["main"]]
    assert files["config.json"] == config and files["README.md"] == (d / "README.md").read_bytes()
    assert (d / "README.md").read_text().startswith("---\n")


@pytest.mark.parametrize("kind", ["symlink", "hardlink"])
def test_push_refuses_a_card_that_is_a_link_before_any_request(
    hub: FakeHub, tmp_path: Path, kind: str
) -> None:
    d = _copy(NESTED, tmp_path / "d")
    _plant(kind, d / "README.md", d / "config.json")
    config = (d / "config.json").read_bytes()
    before = len(hub.log)
    code, out = run("push", str(d), "org/dest", "--token", "hf_granted")
    assert code == 2 and "README.md" in out and "--no-card" in out, out
    assert (d / "config.json").read_bytes() == config and len(hub.log) == before


def test_convert_into_the_target_directory_keeps_the_target(tmp_path: Path) -> None:
    target = _copy(TARGET, tmp_path / "target")
    before = _files(target)
    code, out = run(
        "convert", str(NESTED), "-o", str(target), "--target", str(target), "--to", "flat", "--force"
    )
    assert code == 2 and "overlaps the target" in out, out
    assert _files(target) == before


# ---- 2. Hub deletions explicit and bounded -------------------------------------------------------------


@pytest.mark.parametrize(
    "flag,pattern",
    [("--include", "../*"), ("--delete", "/etc/*"), ("--exclude", "a/../../b"), ("--delete", "../*")],
)
def test_push_refuses_patterns_that_leave_the_folder(
    hub: FakeHub, tmp_path: Path, flag: str, pattern: str
) -> None:
    d = _copy(NESTED, tmp_path / "d")
    hub.add_commit("org/dest", {"LICENSE": b"mit", "sub/other.json": b"{}"}, granted={"hf_granted"})
    before, readme = len(hub.log), (d / "README.md").exists()
    code, out = run("push", str(d), "org/dest", "--token", "hf_granted", flag, pattern, "--yes")
    assert code == 2 and pattern in out and "nothing was read or sent" in out, out
    assert len(hub.log) == before and (d / "README.md").exists() == readme


def test_a_push_that_deletes_lists_every_file_and_needs_yes(hub: FakeHub, tmp_path: Path) -> None:
    d = _copy(NESTED, tmp_path / "d")
    hub.add_commit(
        "org/dest", {"LICENSE": b"mit", "notes.txt": b"n", "sub/other.json": b"{}"}, granted={"hf_granted"}
    )
    head = hub.repos["org/dest"].refs["main"]
    code, out = run("push", str(d), "org/dest", "--token", "hf_granted", "--delete", "*")
    assert code == 2 and all(p in out for p in ("LICENSE", "notes.txt", "sub/other.json")), out
    assert "--yes" in out and hub.repos["org/dest"].refs["main"] == head and not (d / "README.md").exists()
    code, out = run("push", str(d), "org/dest", "--token", "hf_granted", "--delete", "*", "--dry-run")
    assert code == 0 and "delete    sub/other.json" in out and hub.repos["org/dest"].refs["main"] == head, out
    code, out = run("push", str(d), "org/dest", "--token", "hf_granted", "--delete", "*.txt", "--yes")
    assert code == 0, out
    for line in (
        "uploaded  config.json",
        "uploaded  README.md",
        "deleted   notes.txt",
        "kept      LICENSE",
        "kept      sub/other.json",
    ):
        assert line in out, out
    files = hub.repos["org/dest"].commits[hub.repos["org/dest"].refs["main"]]
    assert "notes.txt" not in files and files["LICENSE"] == b"mit" and "sub/other.json" in files


def test_a_confirmation_sees_exactly_the_files_deleted(hub: FakeHub, tmp_path: Path) -> None:
    """The library's `confirm` (the CLI asks on a terminal) gets the list; a no sends nothing."""
    from dflash2_ckpt.errors import UsageError
    from dflash2_ckpt.usecases.push import push

    d = _copy(NESTED, tmp_path / "d")
    hub.add_commit("org/dest", {"a[1].txt": b"a", "b.txt": b"b", "keep.md": b"k"}, granted={"hf_granted"})
    asked: list[tuple[str, ...]] = []
    with pytest.raises(UsageError, match=r"a\[1\]\.txt, b\.txt"):
        push(d, "org/dest", token="hf_granted", delete=["*.txt"], confirm=lambda p: bool(asked.append(p)))
    assert asked == [("a[1].txt", "b.txt")] and hub.commit_requests == []
    result = push(d, "org/dest", token="hf_granted", delete=["*.txt"], confirm=lambda p: True)
    assert result.uploaded and result.plan is not None and result.plan.delete == ("a[1].txt", "b.txt")
    files = hub.repos["org/dest"].commits[hub.repos["org/dest"].refs["main"]]
    assert "a[1].txt" not in files and "b.txt" not in files and files["keep.md"] == b"k"


def test_the_card_written_for_the_push_is_the_one_uploaded(hub: FakeHub, tmp_path: Path) -> None:
    d = _copy(NESTED, tmp_path / "d")
    hub.add_commit("org/dest", {"README.md": b"# old\n"}, granted={"hf_granted"})
    code, out = run("push", str(d), "org/dest", "--token", "hf_granted", "--include", "*.json")
    assert code == 0, out
    files = hub.repos["org/dest"].commits[hub.repos["org/dest"].refs["main"]]
    assert files["README.md"] == (d / "README.md").read_bytes() != b"# old\n"
    assert "model.safetensors" not in files


# ---- 3. numbers survive --fix; a header fix rewrites only the header -----------------------------------


def _unstated(tmp: Path, extra: str) -> Path:
    """nested-v2 without either causality key (DF403, an unsafe fix) and with `extra` as a top-level
    member's exact text."""
    d = _copy(NESTED, tmp / "d")
    cfg = json.loads((d / "config.json").read_text())
    cfg.pop("is_causal", None)
    cfg["dflash_config"].pop("causal", None)
    text = json.dumps(cfg, indent=2)
    (d / "config.json").write_text(text[:-2] + f',\n  "hostile": {extra}\n}}\n')
    return d


def _no_constants(name: str) -> None:
    raise ValueError(f"not JSON: {name}")


def _kept(old: str, new: str) -> bool:
    """Every line of `old` is in `new`, in order (a trailing comma may be added before an insertion)."""
    it = iter(line.rstrip(",") for line in new.splitlines())
    return all(any(line.rstrip(",") == got for got in it) for line in old.splitlines())


def test_fix_keeps_numbers_a_parser_cannot_hold(tmp_path: Path) -> None:
    d = _unstated(tmp_path, "[1e999, -0.0, 1e-400, 0.10000000000000000001, 1E+2]")
    old = (d / "config.json").read_text()
    code, out = run("verify", str(d), "--fix", "--unsafe-fixes")
    new = (d / "config.json").read_text()
    assert "fixed" in out and "[1e999, -0.0, 1e-400, 0.10000000000000000001, 1E+2]" in new, out
    assert _kept(old, new)
    doc = json.loads(new, parse_constant=_no_constants)
    assert doc["is_causal"] is False and doc["dflash_config"]["causal"] is False
    code, out = run("verify", str(d), "--format", "json")
    assert "DF100" not in out and "DF403" not in out


NUMBER = st.one_of(
    st.sampled_from(
        [
            "1e999",
            "-1e999",
            "-0.0",
            "1e-400",
            "5e-324",
            "18446744073709551616",
            "-0",
            "0.1e+5",
            "NaN",
            "Infinity",
            "-Infinity",
            "123456789012345678901234567890.5",
        ]
    ),
    st.from_regex(r"-?(0|[1-9][0-9]{0,25})(\.[0-9]{1,25})?([eE][+-]?[0-9]{1,4})?", fullmatch=True),
    st.floats(allow_nan=False, allow_infinity=False).map(repr),
)


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(numbers=st.lists(NUMBER, min_size=1, max_size=4))
def test_fix_never_changes_a_number_it_does_not_set(numbers: list[str]) -> None:
    """Whatever numbers a config holds, --fix writes valid JSON that keeps each one's text, or nothing."""
    with tempfile.TemporaryDirectory() as tmp:
        member = "[" + ", ".join(numbers) + "]"
        d = _unstated(Path(tmp), member)
        old = (d / "config.json").read_text()
        code, out = run("verify", str(d), "--fix", "--unsafe-fixes")
        assert code in (0, 1) and "Traceback" not in out, out
        new = (d / "config.json").read_text()
        if new == old:
            return  # refused or nothing fixable (a NaN literal, an integer over 64 bits): untouched
        assert member in new and _kept(old, new)
        json.loads(new, parse_constant=_no_constants)
        code, out = run("verify", str(d), "--format", "json")
        assert "DF100" not in out and "DF403" not in out


def test_a_stale_fix_copy_is_removed_and_a_torn_header_restored(tmp_path: Path) -> None:
    d = _copy(FIXTURES / "broken" / "tensor-model-prefix", tmp_path / "d")
    shard = d / "model.safetensors"
    raw = shard.read_bytes()
    n = struct.unpack("<Q", raw[:8])[0]
    (d / ".model.safetensors.ab12_x9z.fix").write_bytes(raw[:50_000])  # an older run's whole-file copy
    journal = d / ".model.safetensors.dflash2-ckpt-0123456789ab.header.fix"
    journal.write_bytes(raw[: 8 + n])  # the old header, saved first
    shard.write_bytes(raw[:8] + b"#" * 40 + raw[48:])  # killed mid-write: torn header
    code, out = run("verify", str(d), "--fix")
    assert "restored the header of model.safetensors" in out and "ab12_x9z.fix (50,000 bytes)" in out, out
    assert [p.name for p in d.iterdir() if p.name.endswith(".fix")] == []
    assert "fixed" in out and code == 0, out
    assert shard.read_bytes()[8 + n :] == raw[8 + n :]  # no data byte touched


def test_a_header_fix_keeps_a_sparse_shard_sparse(tmp_path: Path) -> None:
    d = _copy(FIXTURES / "broken" / "tensor-model-prefix", tmp_path / "d")
    shard = d / "model.safetensors"
    raw = shard.read_bytes()
    n = struct.unpack("<Q", raw[:8])[0]
    with open(shard, "wb") as f:  # the header, then a hole where the (zero) data is
        f.write(raw[: 8 + n])
        f.truncate(len(raw))
    size = shard.stat().st_size
    if shard.stat().st_blocks * 512 >= size // 2:
        pytest.skip("this filesystem does not keep holes")
    ino = shard.stat().st_ino
    code, out = run("verify", str(d), "--fix")
    assert "fixed" in out, out
    st = shard.stat()
    assert st.st_ino == ino and st.st_size == size and st.st_blocks * 512 < size // 2


# ---- 4. exit codes agree with what is printed ----------------------------------------------------------

GOOD = sorted(p.name for p in (FIXTURES / "good").iterdir() if p.is_dir())


@pytest.mark.parametrize("name", GOOD)
def test_compat_without_engine_says_what_its_exit_code_says(name: str) -> None:
    path = str(FIXTURES / "good" / name)
    outs = {fmt: run("compat", path, "--format", fmt) for fmt in ("text", "json", "github", "sarif")}
    codes = {code for code, _ in outs.values()}
    assert len(codes) == 1, outs
    code = codes.pop()
    failed = code == 1
    assert ("FAILED" in outs["text"][1]) == failed and ("FAILED" in outs["github"][1]) == failed
    assert ("::error" in outs["github"][1]) == failed, outs["github"][1]
    levels = {r["level"] for r in json.loads(outs["sarif"][1])["runs"][0]["results"]}
    assert ("error" in levels) == failed


def test_compat_with_a_named_engine_that_refuses_fails_in_every_format() -> None:
    path = str(NESTED)
    code, out = run("compat", path, "--engine", "vllm@0.27.0", "--format", "github")
    assert code == 1 and "FAILED" in out
    code, out = run("compat", path, "--engine", "vllm@0.27.0")
    assert code == 1 and "FAILED" in out


def test_convert_to_gguf_that_finds_an_error_in_what_it_wrote_exits_1(tmp_path: Path) -> None:
    out_file = tmp_path / "d.gguf"
    code, out = run("convert", str(NESTED), "-o", str(out_file), "--to", "gguf", "--target", str(TARGET))
    assert "DF907" in out and code == 1 and "verified" not in out and "FAILED" in out, out
    code, _ = run("verify", str(out_file))
    assert code == 1


def test_diff_against_a_reference_without_weights_is_an_error(tmp_path: Path) -> None:
    ref = tmp_path / "ref"
    ref.mkdir()
    shutil.copy(NESTED / "config.json", ref / "config.json")
    code, out = run("diff", str(NESTED), "--reference", str(ref))
    assert code == 3 and "holds no tensors" in out and "passed" not in out, out


def test_a_header_write_that_fails_puts_the_old_header_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A full disk while --fix writes a sparse shard's header: the old header is written back, the shard
    reads as before, and no journal is left."""
    d = _copy(FIXTURES / "broken" / "tensor-model-prefix", tmp_path / "d")
    before = (d / "model.safetensors").read_bytes()
    real = os.pwrite
    calls: list[int] = []

    def full_disk(fd: int, data: bytes, offset: int) -> int:
        calls.append(len(data))
        if len(calls) == 1:  # half the new header lands, then ENOSPC
            real(fd, data[: len(data) // 2], offset)
            raise OSError(28, "No space left on device")
        return real(fd, data, offset)

    monkeypatch.setattr(os, "pwrite", full_disk)
    code, out = run("verify", str(d), "--fix")
    assert code == 3 and "No space left" in out, out
    assert (d / "model.safetensors").read_bytes() == before
    assert [p.name for p in d.iterdir() if p.name.startswith(".")] == []


def test_a_fix_killed_at_any_moment_leaves_a_whole_checkpoint_and_the_next_fix_finishes(
    tmp_path: Path,
) -> None:
    """kill -9 at spread moments of `verify --fix` (config and header both change): the checkpoint reads
    as either state each time, and the next --fix leaves it fixed, data unchanged, nothing beside it."""
    import random
    import signal
    import subprocess
    import sys
    import time

    from conftest import ROOT

    d = _copy(FIXTURES / "broken" / "tensor-model-prefix", tmp_path / "d")
    data = (d / "model.safetensors").read_bytes()
    n = struct.unpack("<Q", data[:8])[0]
    rng = random.Random(39)
    for _ in range(4):
        p = subprocess.Popen(
            [sys.executable, "-m", "dflash2_ckpt", "verify", str(d), "--fix"],
            cwd=ROOT,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        time.sleep(rng.uniform(0.05, 1.5))
        p.send_signal(signal.SIGKILL)
        p.wait()
        raw = (d / "model.safetensors").read_bytes()
        assert raw[8 + n :] == data[8 + n :]
        journals = [j for j in d.iterdir() if j.name.endswith(".header.fix")]
        if not journals:  # a torn header is possible only while its journal exists
            json.loads(raw[8 : 8 + n])
        json.loads((d / "config.json").read_text())
    code, out = run("verify", str(d), "--fix")
    assert code == 0, out
    assert sorted(p.name for p in d.iterdir()) == ["config.json", "model.safetensors"]
    assert (d / "model.safetensors").read_bytes()[8 + n :] == data[8 + n :]
