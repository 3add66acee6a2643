#!/usr/bin/env python3
"""`verify --fix` of a tensor rename on the sparse Qwen3.8-27B-DFlash2 layout: seconds and disk used.

    python bench/bench_fix_header.py [--dir /tmp/dflash2-bench-fix] [--root OTHER_CHECKOUT]...

Materialises the published 3,848,817,896-byte file as a sparse file (real header, a hole for the data)
with layer 0's tensors under a `model.` prefix (DF202, a safe fix), then runs `verify --fix` in a fresh
process for each checkout given with --root (default: this one) and prints its exit code, its seconds
and the shard's allocated bytes before and after. A fix that rewrites only the header keeps the hole.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
Q27 = "z-lab_Qwen3.8-27B-DFlash2"


def run(root: Path, d: Path) -> str:
    sys.path.insert(0, str(ROOT))
    from dflash2_ckpt.dev.synth import materialise, read_tensor_list

    real = ROOT / "fixtures" / "real"
    cfg = json.loads((real / f"{Q27}.config.json").read_text())
    ts = [
        ("model." + t[0], *t[1:]) if t[0].startswith("layers.0.") else t
        for t in read_tensor_list(real / f"{Q27}.tensors.tsv")
    ]
    shutil.rmtree(d, ignore_errors=True)
    materialise(d, cfg, ts)
    shard = d / "model.safetensors"
    before = shard.stat().st_blocks * 512
    t0 = time.monotonic()
    r = subprocess.run(
        [sys.executable, "-m", "dflash2_ckpt", "verify", str(d), "--fix"],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(root)},
        cwd=root,
    )
    seconds = time.monotonic() - t0
    after = shard.stat().st_blocks * 512
    shutil.rmtree(d)
    said = (r.stderr.strip().splitlines() or [""])[0]
    return (
        f"{root}: exit {r.returncode}, {seconds:.2f} s, file {shard.name} "
        f"allocated {before:,} B -> {after:,} B ({said})"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dir", default="/tmp/dflash2-bench-fix", type=Path)
    ap.add_argument(
        "--root", action="append", type=Path, help="a checkout to run (repeatable; default: this one)"
    )
    args = ap.parse_args()
    print(f"load average {os.getloadavg()[0]:.2f}")
    for root in args.root or [ROOT]:
        print(run(root, args.dir))


if __name__ == "__main__":
    main()
