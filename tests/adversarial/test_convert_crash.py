"""Crash-safe convert: SIGKILL at random moments, a full disk (RLIMIT_FSIZE), a read-only parent.

After every failure: the source's bytes are unchanged, DST is either absent or complete and clean,
and the next run succeeds and leaves no staging behind. DFLASH2_CRASH_RUNS raises the number of kills.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from adv_corpus import GOOD

from dflash2_ckpt.checkpoint.layout import expected_tensors
from dflash2_ckpt.convert import convert
from dflash2_ckpt.dev.synth import materialise
from dflash2_ckpt.formats.parse import to_spec
from dflash2_ckpt.usecases.verify import verify

RUNS = int(os.environ.get("DFLASH2_CRASH_RUNS", "10"))
CHILD = (
    "import sys; from dflash2_ckpt.convert import convert; print('ready', flush=True); "
    "convert(sys.argv[1], sys.argv[2], to='flat', verifier_name='tiny/target', verifier_architectures=('Qwen3ForCausalLM',))"
)


@pytest.fixture(scope="module")
def source() -> Iterator[Path]:
    """A ~25 MB nested-v2 drafter with real (seeded) data, so a conversion lasts long enough to be killed
    mid-write. World-readable, in its own 0755 directory, so an unprivileged child can read it too."""
    root = Path(tempfile.mkdtemp(prefix="dflash2-crash-"))
    os.chmod(root, 0o755)
    cfg = json.loads((GOOD / "nested-v2" / "config.json").read_text())
    cfg.update(
        hidden_size=512,
        intermediate_size=1024,
        num_attention_heads=8,
        num_key_value_heads=4,
        head_dim=64,
        vocab_size=2048,
    )
    cfg["dflash_config"].update(mask_token_id=2047, selector_rank=64)
    spec, errors = to_spec(cfg)
    assert spec is not None, errors
    rng = np.random.default_rng(0)
    src = materialise(
        root / "src",
        cfg,
        [(e.name, "F32", e.shape) for e in expected_tensors(spec)],
        data=lambda name, n: (0.02 * rng.standard_normal(n // 4)).astype("<f4").tobytes(),
    )
    for p in [src, *src.iterdir()]:
        os.chmod(p, 0o755 if p.is_dir() else 0o644)
    assert not verify(src).failed()
    yield src
    shutil.rmtree(root, ignore_errors=True)


def digests(d: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(d.iterdir())}


def leftovers(dst: Path) -> list[str]:
    return [p.name for p in dst.parent.iterdir() if p.name.startswith(f".{dst.name}.dflash2-")]


def assert_complete_or_absent(dst: Path) -> None:
    if os.path.lexists(dst):
        report = verify(dst)
        assert report.summary["dialect"] == "flat" and not report.failed(), [
            f.message for f in report.findings
        ]


def next_run_succeeds(src: Path, dst: Path) -> None:
    if os.path.lexists(dst):
        shutil.rmtree(dst)
    convert(src, dst, to="flat", verifier_name="tiny/target", verifier_architectures=("Qwen3ForCausalLM",))
    assert_complete_or_absent(dst)
    assert os.path.isdir(dst) and not leftovers(dst), leftovers(dst)


def child(src: Path, dst: Path, preexec: Callable[[], None] | None = None) -> subprocess.Popen[str]:
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1")
    return subprocess.Popen(
        [sys.executable, "-c", CHILD, str(src), str(dst)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=preexec,
        env=env,
    )


def test_sigkill_at_random_moments(source: Path, tmp_path: Path) -> None:
    before = digests(source)
    t0 = time.monotonic()
    convert(
        source,
        tmp_path / "timing",
        to="flat",
        verifier_name="tiny/target",
        verifier_architectures=("Qwen3ForCausalLM",),
    )
    full = time.monotonic() - t0  # the conversion itself, imports excluded
    rng = random.Random(1234)
    dst = tmp_path / "out"
    for i in range(RUNS):
        proc = child(source, dst)
        try:
            assert proc.stdout is not None
            ready = proc.stdout.readline().strip()
            time.sleep(rng.uniform(0, 1.2 * full))  # anywhere in plan / stage / verify / install, or after
        finally:
            proc.send_signal(signal.SIGKILL)
            _, err = proc.communicate(timeout=60)
        assert ready == "ready", err[-2000:]
        assert digests(source) == before, f"run {i}: the source changed"
        assert_complete_or_absent(dst)
        next_run_succeeds(source, dst)
        shutil.rmtree(dst)


def test_disk_full_leaves_nothing(source: Path, tmp_path: Path) -> None:
    before = digests(source)
    dst = tmp_path / "out"

    def small_disk() -> None:  # writes past 2 MB fail with EFBIG (Python ignores SIGXFSZ)
        resource.setrlimit(resource.RLIMIT_FSIZE, (2 * 1024 * 1024, 2 * 1024 * 1024))

    proc = child(source, dst, small_disk)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode != 0 and "WriteError" in err, err[-2000:]
    assert not os.path.lexists(dst) and not leftovers(dst), leftovers(dst)
    assert digests(source) == before
    next_run_succeeds(source, dst)


def _read_only(parent: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Make `parent` refuse new entries. chmod 0555 does it for a normal user; root ignores directory
    permissions, so under root mkdir / open-for-write inside it raise EACCES the way the kernel would."""
    os.chmod(parent, 0o555)
    if os.geteuid() != 0:
        return
    real_mkdir, real_open = os.mkdir, os.open

    def inside(path: Any) -> bool:
        return Path(os.fspath(path)).absolute().parent == parent

    def mkdir(path: Any, *a: Any, **k: Any) -> None:
        if inside(path):
            raise PermissionError(13, "Permission denied", os.fspath(path))
        real_mkdir(path, *a, **k)

    def open_(path: Any, flags: int, *a: Any, **k: Any) -> int:
        if inside(path) and flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT):
            raise PermissionError(13, "Permission denied", os.fspath(path))
        return real_open(path, flags, *a, **k)

    monkeypatch.setattr(os, "mkdir", mkdir)
    monkeypatch.setattr(os, "open", open_)


# We run as root here, so the read-only parent is simulated by refusing mkdir/open inside it.
def test_read_only_parent(source: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from dflash2_ckpt.errors import Dflash2Error

    before = digests(source)
    parent = Path(tempfile.mkdtemp(prefix="dflash2-ro-"))
    dst = parent / "out"
    try:
        with monkeypatch.context() as m:
            _read_only(parent, m)
            with pytest.raises(Dflash2Error):
                convert(
                    source,
                    dst,
                    to="flat",
                    verifier_name="tiny/target",
                    verifier_architectures=("Qwen3ForCausalLM",),
                )
        assert not os.path.lexists(dst) and not leftovers(dst)
        assert digests(source) == before
        os.chmod(parent, 0o755)
        next_run_succeeds(source, dst)
    finally:
        os.chmod(parent, 0o755)
        shutil.rmtree(parent, ignore_errors=True)
