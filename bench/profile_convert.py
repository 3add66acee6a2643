#!/usr/bin/env python3
"""Where convert's time goes, in-process (no interpreter start), and an A/B of the writeback head start.

    python bench/profile_convert.py [--gib 1] [--repeat 6] [--dir /tmp/dflash2-profile-convert] [--cold]

Builds the same non-sparse checkpoint as bench_convert.py, reads it once (hot cache; --cold evicts it
before every run instead), then converts it --to flat `repeat` times, alternating the kernel's own
writeback (what convert does) with a sync_file_range head start after every 64 MiB step (what it did
before, and what the GGUF writer still does), timing the kernel copy, the spot check and fsync.
Deletes everything at the end.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import _paired  # noqa: E402
import bench_convert  # noqa: E402

import dflash2_ckpt.convert as convert_mod  # noqa: E402
from dflash2_ckpt.convert import stream  # noqa: E402

PARTS = {"copy": 0.0, "check": 0.0, "fsync": 0.0}


def timed(key: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    def wrapper(*a: Any) -> Any:
        t = time.perf_counter()
        try:
            return fn(*a)
        finally:
            PARTS[key] += time.perf_counter() - t

    return wrapper


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--gib", type=float, default=1.0)
    ap.add_argument("--repeat", type=int, default=6)
    ap.add_argument("--dir", default="/tmp/dflash2-profile-convert")
    ap.add_argument(
        "--cold", action="store_true", help="evict the source from the page cache before every run"
    )
    args = ap.parse_args()
    work = Path(args.dir)
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    try:
        src = work / "src"
        size = bench_convert.build(src, args.gib)
        with open(src / "model.safetensors", "rb") as f:  # hot cache
            while f.read(64 << 20):
                pass
        real_copy = stream.copy_range
        mode = "kernel"

        def copy(*a: Any) -> None:
            real_copy(*a, writeback=mode == "sync_file_range")

        stream.copy_range = timed("copy", copy)
        stream.same_samples = timed("check", stream.same_samples)
        stream.os.fsync = timed("fsync", os.fsync)  # type: ignore[attr-defined]
        totals: dict[str, list[float]] = {"kernel": [], "sync_file_range": []}
        for i in range(args.repeat * 2):
            mode = "kernel" if i % 2 == 0 else "sync_file_range"
            for k in PARTS:
                PARTS[k] = 0.0
            os.sync()
            if args.cold:
                _paired.evict([src])
            t = time.perf_counter()
            convert_mod.convert(
                src,
                work / "dst",
                to="flat",
                verifier_name="bench/target",
                verifier_architectures=("Qwen3ForCausalLM",),
            )
            totals[mode].append(time.perf_counter() - t)
            print(
                f"{mode:15} total {totals[mode][-1]:.2f} s  "
                + "  ".join(f"{k} {v:.2f}" for k, v in PARTS.items())
            )
            shutil.rmtree(work / "dst")
        print(
            f"{size:,} B; "
            + "; ".join(
                f"{m}: median {statistics.median(v):.2f} s, best {min(v):.2f} s" for m, v in totals.items()
            )
        )
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
