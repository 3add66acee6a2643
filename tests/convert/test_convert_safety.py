"""Never lose data: the source is never modified; DST is complete or absent, whatever fails, even SIGKILL."""

from __future__ import annotations

import errno
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from test_convert_refusals import p

import dflash2_ckpt.convert.stream as stream
from _kit.convert import build, flat_config, leftovers, nested_config, tensor_bytes, tree_digest
from dflash2_ckpt.convert import WriteError, convert
from dflash2_ckpt.convert.staging import OLD, TMP, clean_stale
from dflash2_ckpt.errors import ConversionError
from dflash2_ckpt.usecases.verify import verify


@pytest.fixture
def src(tmp_path: Path) -> Path:
    return build(tmp_path / "src", nested_config(p()), seed=7, shards=2)


def test_source_untouched_and_output_verifies(tmp_path: Path, src: Path) -> None:
    before = tree_digest(src)
    mtimes = {f: f.stat().st_mtime_ns for f in src.iterdir()}
    r = convert(
        src, tmp_path / "out", to="flat", verifier_name="a/b", verifier_architectures=("Qwen3ForCausalLM",)
    )
    assert tree_digest(src) == before and {f: f.stat().st_mtime_ns for f in src.iterdir()} == mtimes
    assert r.written and r.tensors_verified == len(tensor_bytes(src))
    assert not verify(tmp_path / "out").failed()
    assert leftovers(tmp_path) == []


def test_dry_run_writes_nothing(tmp_path: Path, src: Path) -> None:
    listing = sorted(os.listdir(tmp_path))
    r = convert(
        src,
        tmp_path / "out",
        to="flat",
        verifier_name="a/b",
        verifier_architectures=("Qwen3ForCausalLM",),
        dry_run=True,
    )
    assert r.dry_run and not r.written and r.config["speculators_model_type"] == "dflash2"
    assert sorted(os.listdir(tmp_path)) == listing


def test_existing_destination_needs_force(tmp_path: Path, src: Path) -> None:
    dst = tmp_path / "out"
    dst.mkdir()
    (dst / "keep.txt").write_text("old")
    with pytest.raises(ConversionError, match="already exists"):
        convert(src, dst, to="flat", verifier_name="a/b", verifier_architectures=("Qwen3ForCausalLM",))
    assert (dst / "keep.txt").read_text() == "old"
    convert(
        src, dst, to="flat", verifier_name="a/b", verifier_architectures=("Qwen3ForCausalLM",), force=True
    )
    assert (
        not (dst / "keep.txt").exists()
        and json.loads((dst / "config.json").read_text())["speculators_config"]
    )
    assert leftovers(tmp_path) == []


def test_force_keeps_old_destination_when_verification_fails(
    tmp_path: Path, src: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    dst = tmp_path / "out"
    dst.mkdir()
    (dst / "keep.txt").write_text("old")

    def corrupt(*args: object) -> bool:
        raise ConversionError("simulated mismatch")

    monkeypatch.setattr(stream, "same_samples", corrupt)
    with pytest.raises(ConversionError, match="simulated"):
        convert(
            src, dst, to="flat", verifier_name="a/b", verifier_architectures=("Qwen3ForCausalLM",), force=True
        )
    assert (dst / "keep.txt").read_text() == "old" and leftovers(tmp_path) == []


def test_disk_full_leaves_nothing(tmp_path: Path, src: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls = {"n": 0}
    real = stream.copy_range

    def full(*args: object) -> None:
        calls["n"] += 1
        if calls["n"] > 5:
            raise OSError(errno.ENOSPC, "No space left on device")
        real(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(stream, "copy_range", full)
    with pytest.raises(WriteError, match="No space left"):
        convert(
            src,
            tmp_path / "out",
            to="flat",
            verifier_name="a/b",
            verifier_architectures=("Qwen3ForCausalLM",),
        )
    assert not (tmp_path / "out").exists() and leftovers(tmp_path) == []


@pytest.mark.parametrize("kernel", [True, False], ids=["copy_file_range", "buffered"])
@pytest.mark.parametrize("where", ["start", "end"])
def test_corrupted_write_is_caught(
    tmp_path: Path, src: Path, monkeypatch: pytest.MonkeyPatch, kernel: bool, where: str
) -> None:
    """A byte that differs from the source after the copy (a stray write) is caught by the spot check at
    either end of the run, without reading the whole output back."""
    real = stream.copy_range
    if not kernel:  # the fallback path where the kernel cannot copy between the files
        monkeypatch.delattr(os, "copy_file_range")

    def flip(
        src_fd: int, start: int, length: int, dst_fd: int, out: int, buf: bytearray, ledger: stream.Ledger
    ) -> None:
        real(src_fd, start, length, dst_fd, out, buf, ledger)
        if length > 100:
            at = 50 if where == "start" else length - 50
            byte = os.pread(src_fd, 1, start + at)
            os.pwrite(dst_fd, bytes([byte[0] ^ 1]), out + at)

    monkeypatch.setattr(stream, "copy_range", flip)
    with pytest.raises(ConversionError, match="differ from the"):
        convert(
            src,
            tmp_path / "out",
            to="flat",
            verifier_name="a/b",
            verifier_architectures=("Qwen3ForCausalLM",),
        )
    assert not (tmp_path / "out").exists() and leftovers(tmp_path) == []


def test_corrupted_byte_inside_a_large_run_is_caught_by_the_random_samples(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Inside a run, one random 64 KiB place per 256 MiB is compared; with a run of 4 sample widths and
    one sample per 64 KiB (the rate shrunk for the test), every middle byte is checked."""
    monkeypatch.setattr(stream, "SAMPLE_EVERY", stream.SAMPLE)
    a, b = tmp_path / "a", tmp_path / "b"
    data = os.urandom(4 * stream.SAMPLE)
    a.write_bytes(data)
    wrong = bytearray(data)
    wrong[2 * stream.SAMPLE + 7] ^= 1
    b.write_bytes(bytes(wrong))
    fa, fb = os.open(a, os.O_RDONLY), os.open(b, os.O_RDONLY)
    try:
        import random

        assert any(not stream.same_samples(fa, 0, fb, 0, len(data), random.Random(i)) for i in range(20))
        assert stream.same_samples(fa, 0, fa, 0, len(data), random.Random(0))
    finally:
        os.close(fa)
        os.close(fb)


@pytest.mark.parametrize("fault", ["shifted", "short", "skipped"])
def test_a_write_off_the_plan_is_caught_by_the_ledger(
    tmp_path: Path, src: Path, monkeypatch: pytest.MonkeyPatch, fault: str
) -> None:
    """A copy that lands one byte off, stops short or is skipped is refused before the rename, from the
    ledger of what the system calls reported, whatever the bytes look like."""
    real = stream.copy_range
    calls = {"n": 0}

    def bad(
        src_fd: int, start: int, length: int, dst_fd: int, out: int, buf: bytearray, ledger: stream.Ledger
    ) -> None:
        calls["n"] += 1
        if calls["n"] != 3 or length < 8:
            return real(src_fd, start, length, dst_fd, out, buf, ledger)
        if fault == "shifted":
            return real(src_fd, start, length, dst_fd, out + 1, buf, ledger)
        if fault == "short":
            return real(src_fd, start, length - 4, dst_fd, out, buf, ledger)
        return None

    monkeypatch.setattr(stream, "copy_range", bad)
    with pytest.raises(ConversionError, match="do not cover the planned byte ranges"):
        convert(
            src,
            tmp_path / "out",
            to="flat",
            verifier_name="a/b",
            verifier_architectures=("Qwen3ForCausalLM",),
        )
    assert not (tmp_path / "out").exists() and leftovers(tmp_path) == []


def test_a_source_changed_during_the_copy_is_caught(
    tmp_path: Path, src: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = stream.copy_range
    shard = sorted(src.glob("*.safetensors"))[0]

    def touch(*args: object) -> None:
        real(*args)  # type: ignore[arg-type]
        st = shard.stat()
        os.utime(shard, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))

    monkeypatch.setattr(stream, "copy_range", touch)
    with pytest.raises(ConversionError, match="changed while it was being copied"):
        convert(
            src,
            tmp_path / "out",
            to="flat",
            verifier_name="a/b",
            verifier_architectures=("Qwen3ForCausalLM",),
        )
    assert not (tmp_path / "out").exists() and leftovers(tmp_path) == []


CHILD = """
import sys, time
from pathlib import Path
import dflash2_ckpt.convert.stream as stream
real = stream.copy_range
def slow(*args):
    real(*args)
    Path(sys.argv[3]).touch()
    time.sleep(60)
stream.copy_range = slow
from dflash2_ckpt.convert import convert
convert(sys.argv[1], sys.argv[2], to="flat", verifier_name="a/b", verifier_architectures=("Qwen3ForCausalLM",), force=True)
"""


def _kill_mid_write(src: Path, dst: Path, marker: Path) -> None:
    proc = subprocess.Popen([sys.executable, "-c", CHILD, str(src), str(dst), str(marker)])
    try:
        deadline = time.monotonic() + 30
        while not marker.exists():
            assert proc.poll() is None and time.monotonic() < deadline, "child never started writing"
            time.sleep(0.02)
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.wait()


def test_sigkill_mid_write_leaves_no_destination(tmp_path: Path, src: Path) -> None:
    dst = tmp_path / "out"
    before = tree_digest(src)
    _kill_mid_write(src, dst, tmp_path / "marker")
    assert not dst.exists()
    assert [n for n in leftovers(tmp_path) if TMP in n], "the killed run's staging should be there"
    # the next run removes the dead run's staging and converts
    r = convert(src, dst, to="flat", verifier_name="a/b", verifier_architectures=("Qwen3ForCausalLM",))
    assert r.written and any("interrupted run" in c for c in r.cleaned)
    assert leftovers(tmp_path) == [] and tree_digest(src) == before
    assert not verify(dst).failed()


def test_sigkill_with_force_keeps_old_destination(tmp_path: Path, src: Path) -> None:
    dst = tmp_path / "out"
    convert(src, dst, to="flat", verifier_name="old/name", verifier_architectures=("Qwen3ForCausalLM",))
    old = tree_digest(dst)
    _kill_mid_write(src, dst, tmp_path / "marker")
    assert tree_digest(dst) == old


def test_dead_force_run_between_renames_is_rolled_back(tmp_path: Path) -> None:
    """Killed after moving the old DST aside and before moving the new one in: the next run restores it."""
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True
    )
    pid = int(dead.stdout)
    dst = tmp_path / "out"
    aside = tmp_path / f".out{OLD}{pid}-abcd1234"
    aside.mkdir()
    (aside / "config.json").write_text("{}")
    staging = tmp_path / f".out{TMP}{pid}-abcd1234"
    staging.mkdir()
    actions = clean_stale(dst)
    assert (dst / "config.json").read_text() == "{}" and not aside.exists() and not staging.exists()
    assert any("restored" in a for a in actions)


def test_live_run_staging_is_left_alone(tmp_path: Path) -> None:
    live = tmp_path / f".out{TMP}{os.getppid()}-abcd1234"
    live.mkdir()
    clean_stale(tmp_path / "out")
    assert live.exists()


def test_flat_source_untouched(tmp_path: Path) -> None:
    src = build(tmp_path / "src", flat_config(p()), seed=3)
    before = tree_digest(src)
    convert(src, tmp_path / "out", to="nested")
    assert tree_digest(src) == before


def test_buffered_copy_when_the_kernel_cannot(
    tmp_path: Path, src: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def exdev(*args: object) -> int:
        raise OSError(errno.EXDEV, "Invalid cross-device link")

    monkeypatch.setattr(os, "copy_file_range", exdev)
    convert(
        src, tmp_path / "out", to="flat", verifier_name="a/b", verifier_architectures=("Qwen3ForCausalLM",)
    )
    assert tensor_bytes(tmp_path / "out") == tensor_bytes(src)


def test_every_installed_file_is_fsynced_before_the_rename(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the carried files (tokenizer, README) too, not only the shards and the JSON the plan writes: after a
    # power cut an installed directory must not hold an empty tokenizer.json
    from conftest import FIXTURES

    src = tmp_path / "src"
    import shutil

    shutil.copytree(FIXTURES / "good" / "nested-v2", src)
    (src / "tokenizer.json").write_text('{"model": {}}')
    (src / "README.md").write_text("# drafter\n")
    synced: list[str] = []
    real = os.fsync

    def recording(fd: int) -> None:
        synced.append(os.readlink(f"/proc/self/fd/{fd}"))
        real(fd)

    monkeypatch.setattr(os, "fsync", recording)
    convert(str(src), str(tmp_path / "out"), to="flat", target=str(FIXTURES / "targets" / "tiny-target"))
    files = {Path(s).name for s in synced}
    assert {"tokenizer.json", "README.md", "config.json", "model.safetensors"} <= files, synced
    assert (tmp_path / "out" / "tokenizer.json").read_text() == '{"model": {}}'
