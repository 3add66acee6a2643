#!/usr/bin/env python3
"""Header-level verify vs a verify that loads the tensors, on the real Qwen3.8-27B-DFlash2 layout.

    python bench/bench_verify.py [--dir /tmp/dflash2-bench-q27] [--repeat 5]

Materialises the published 81-tensor, 3,848,817,896-byte file with every data byte written (a repeated
random block, so a cold read really goes to the disk), then, in one run, times: (a) dflash2_ckpt.verify
(headers only) and (b) a baseline `safetensors.torch.load_file` (a lazy mmap: names, shapes, dtypes),
like with like: `repeat` interleaved pairs with the file in the page cache (hot), then `repeat` with it
evicted before each run (cold: posix_fadvise DONTNEED, bench/_paired.py), each in its own subprocess,
medians; (c) once, hot, load_file plus one pass over every value, as a content check would; (d) the CLI
end to end in a fresh process, hot. The load average is printed before and after.
"""

from __future__ import annotations

import argparse
import json
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
REAL = ROOT / "fixtures" / "real"
Q27 = "z-lab_Qwen3.8-27B-DFlash2"

HEADER_ONLY = """
import sys, time, json
from dflash2_ckpt.usecases.verify import verify
t = time.perf_counter()
r = verify(sys.argv[1])
print(json.dumps({"seconds": time.perf_counter() - t, "bytes_read": r.bytes_read,
                  "findings": [f.code for f in r.findings]}))
"""
FULL_LOAD = """
import sys, time, json
from safetensors.torch import load_file
t = time.perf_counter()
tensors = load_file(sys.argv[1] + "/model.safetensors")
if sys.argv[2] == "touch":   # also pass over every value, as a content check would
    checksum = sum(float(a.float().abs().sum()) for a in tensors.values())
names = sorted(tensors)
shapes = {n: tuple(a.shape) for n, a in tensors.items()}
nbytes = sum(a.numel() * a.element_size() for a in tensors.values())
print(json.dumps({"seconds": time.perf_counter() - t, "bytes_read": nbytes, "tensors": len(names)}))
"""


def child(code: str, *args: str) -> tuple[dict, float, int]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    t = time.perf_counter()
    out = subprocess.run(
        [sys.executable, "-c", code, *args], check=True, capture_output=True, text=True
    ).stdout
    wall = time.perf_counter() - t
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return json.loads(out), wall, max(peak, before)


def paired_cache(d: Path, repeat: int) -> None:
    sys.path.insert(0, str(ROOT / "bench"))
    import statistics

    import _paired

    for cache in ("hot", "cold"):
        runs: dict[str, list[tuple[float, int]]] = {"verify": [], "load_file": []}
        for i in range(repeat):
            for which in ("verify", "load_file") if i % 2 == 0 else ("load_file", "verify"):
                (_paired.warm if cache == "hot" else _paired.evict)([d / "model.safetensors"])
                r = child(HEADER_ONLY, str(d)) if which == "verify" else child(FULL_LOAD, str(d), "load")
                runs[which].append((r[0]["seconds"], r[2]))
        v = statistics.median(x[0] for x in runs["verify"])
        lf = statistics.median(x[0] for x in runs["load_file"])
        print(
            f"{cache:4}: header-only verify median {v * 1e3:.1f} ms, load_file median {lf * 1e3:.1f} ms "
            f"(imports excluded, {repeat} interleaved pairs) -> load_file / verify = {lf / v:.2f}x; runs verify "
            + " ".join(f"{x[0] * 1e3:.1f}" for x in runs["verify"])
            + " | load_file "
            + " ".join(f"{x[0] * 1e3:.1f}" for x in runs["load_file"])
        )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--dir", default="/tmp/dflash2-bench-q27")
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    sys.path.insert(0, str(ROOT))
    import os
    import random

    from dflash2_ckpt.dev.synth import materialise, read_tensor_list

    d = Path(args.dir)
    shutil.rmtree(d, ignore_errors=True)
    block = random.Random(1).randbytes(64 << 20)
    materialise(
        d,
        json.loads((REAL / f"{Q27}.config.json").read_text()),
        read_tensor_list(REAL / f"{Q27}.tensors.tsv"),
        data=lambda n, k: (block * (k // len(block) + 1))[:k],
    )
    size = (d / "model.safetensors").stat().st_size
    print(f"load average before: {os.getloadavg()}")
    paired_cache(d, args.repeat)

    header = [child(HEADER_ONLY, str(d)) for _ in range(args.repeat)]
    load = child(FULL_LOAD, str(d), "load")
    full = child(FULL_LOAD, str(d), "touch")  # RUSAGE_CHILDREN peak is monotone: the biggest runs last
    cli_walls = []
    for _ in range(args.repeat):
        t = time.perf_counter()
        subprocess.run(["dflash2-ckpt", "verify", str(d), "--format", "json"], capture_output=True)
        cli_walls.append(time.perf_counter() - t)

    h_in = min(r[0]["seconds"] for r in header)
    f_in = full[0]["seconds"]
    print(f"file: {size:,} B (every byte written), 81 tensors; hot from here on")
    print(
        f"header-only verify: {h_in * 1e3:.2f} ms (imports excluded, best of {args.repeat}), "
        f"bytes read {header[0][0]['bytes_read']:,}, peak RSS {header[0][2] / 1024:.0f} MiB, "
        f"findings {header[0][0]['findings']}"
    )
    l_in = load[0]["seconds"]
    print(
        f"baseline safetensors.torch.load_file (one run, right after the best-of verify runs): {l_in * 1e3:.0f} ms, "
        f"tensor bytes {load[0]['bytes_read']:,}, peak RSS {load[2] / 1024:.0f} MiB (compare like with like: the "
        "paired medians above)"
    )
    print(
        f"baseline load_file + one pass over the values: {f_in * 1e3:.0f} ms, peak RSS {full[2] / 1024:.0f} MiB"
        f" -> header-only is {f_in / h_in:.0f}x faster"
    )
    print(
        f"CLI end to end (fresh process, import included): best {min(cli_walls):.2f} s, "
        f"worst {max(cli_walls):.2f} s"
    )
    print(f"load average after: {os.getloadavg()}")
    shutil.rmtree(d, ignore_errors=True)


if __name__ == "__main__":
    main()
