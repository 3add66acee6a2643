#!/usr/bin/env python3
"""The copy loop alone, in-process (no interpreter start, no plan or checks), against `cp SRC DST && sync`:
which of convert's write choices cost time. Each variant copies one file with copy_file_range in 64 MiB
steps and fsyncs it:
  grow            the file grows as it is written (what convert/stream.py does)
  presize         ftruncate to the final size first, then copy (what it did before)
  writeback       grow, and sync_file_range(SYNC_FILE_RANGE_WRITE) after every step (the GGUF writer)
  presize+wb      both (the dialect writer before)
in rounds whose order alternates, the source hot (read once) or cold (evicted, as bench/_paired.py);
medians and minima of wall and CPU time (CPU: user + sys, the children's too for cp).

    python bench/copy_loop.py FILE [--cache cold] [--repeat 3] [--variants cp,grow,presize,writeback,presize+wb]
"""

from __future__ import annotations

import argparse
import ctypes
import ctypes.util
import functools
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import _paired  # noqa: E402

from dflash2_ckpt.convert.stream import STEP  # noqa: E402


@functools.cache
def _sync_file_range() -> Any:
    # looked up once: find_library runs ldconfig, which would land inside the timed loop
    fn = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True).sync_file_range
    fn.argtypes = (ctypes.c_int, ctypes.c_int64, ctypes.c_int64, ctypes.c_uint)
    return fn


def start_writeback(fd: int, offset: int, length: int) -> None:
    """sync_file_range(SYNC_FILE_RANGE_WRITE): the head-start writeback the writers used to start per step
    (Python's os module does not expose it), kept here as the variant the writers were measured against."""
    _sync_file_range()(fd, offset, length, 2)


def loop(presize: bool, writeback: bool) -> Callable[[str, str], None]:
    def run(src: str, dst: str) -> None:
        s = os.open(src, os.O_RDONLY)
        d = os.open(dst, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o644)
        try:
            size = os.fstat(s).st_size
            if presize:
                os.ftruncate(d, size)
            done = 0
            while done < size:
                got = os.copy_file_range(s, d, min(STEP, size - done), done, done)
                if got <= 0:
                    raise RuntimeError("short copy")
                if writeback:
                    start_writeback(d, done, got)
                done += got
            os.fsync(d)
        finally:
            os.close(d)
            os.close(s)

    return run


def cp(src: str, dst: str) -> None:
    subprocess.run(["sh", "-c", f"cp '{src}' '{dst}' && sync"], check=True)


VARIANTS: dict[str, Callable[[str, str], None]] = {
    "cp": cp,
    "grow": loop(False, False),
    "presize": loop(True, False),
    "writeback": loop(False, True),
    "presize+wb": loop(True, True),
}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("file", type=Path)
    ap.add_argument("--cache", choices=["hot", "cold"], default="cold")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--variants", default=",".join(VARIANTS))
    ap.add_argument("--dst", type=Path, help="where to write (default: FILE.copy-loop beside it)")
    a = ap.parse_args()
    names = a.variants.split(",")
    dst = a.dst or a.file.with_name(a.file.name + ".copy-loop")
    runs: dict[str, list[tuple[float, float]]] = {n: [] for n in names}
    print(f"load average at start: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    try:
        for i in range(a.repeat):
            for name in names if i % 2 == 0 else names[::-1]:
                dst.unlink(missing_ok=True)
                os.sync()
                (_paired.warm if a.cache == "hot" else _paired.evict)([a.file])
                before, t = os.times(), time.perf_counter()
                VARIANTS[name](str(a.file), str(dst))
                wall, after = time.perf_counter() - t, os.times()
                cpu = sum(after[:4]) - sum(before[:4])
                runs[name].append((wall, cpu))
    finally:
        dst.unlink(missing_ok=True)
    print(
        f"{a.file.stat().st_size:,} B, {a.cache}; load average at end: "
        f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}"
    )
    for name, v in runs.items():
        print(
            f"{name:11} wall median {statistics.median(w for w, _ in v):.2f} s, min {min(w for w, _ in v):.2f} s; "
            f"CPU median {statistics.median(c for _, c in v):.2f} s"
        )


if __name__ == "__main__":
    main()
