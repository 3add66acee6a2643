#!/usr/bin/env python3
"""Header-level verify vs a verify that loads the tensors, on the real Qwen3.8-27B-DFlash2 layout.

    python bench/bench_verify.py [--dir /tmp/dflash2-bench-q27]

Materialises the published 81-tensor, 3,848,817,896-byte file as a sparse file (real header, zero
data), then, in one run, times: (a) dflash2_ckpt.verify (headers only), (b) a baseline that loads
every tensor with safetensors and checks names / shapes / dtypes on the loaded arrays, and (c) the
CLI end to end in a fresh process. Each runs in its own subprocess so peak RSS is its own.
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
from dflash2_ckpt.verify import verify
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
    out = subprocess.run([sys.executable, "-c", code, *args], check=True, capture_output=True, text=True).stdout
    wall = time.perf_counter() - t
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return json.loads(out), wall, max(peak, before)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--dir", default="/tmp/dflash2-bench-q27")
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    sys.path.insert(0, str(ROOT))
    from dflash2_ckpt.dev.synth import materialise, read_tensor_list
    d = Path(args.dir)
    shutil.rmtree(d, ignore_errors=True)
    materialise(d, json.loads((REAL / f"{Q27}.config.json").read_text()),
                read_tensor_list(REAL / f"{Q27}.tensors.tsv"))
    size = (d / "model.safetensors").stat().st_size

    header = [child(HEADER_ONLY, str(d)) for _ in range(args.repeat)]
    load = child(FULL_LOAD, str(d), "load")
    full = child(FULL_LOAD, str(d), "touch")   # RUSAGE_CHILDREN peak is monotone: the biggest runs last
    cli_walls = []
    for _ in range(args.repeat):
        t = time.perf_counter()
        subprocess.run(["dflash2-ckpt", "verify", str(d), "--format", "json"], capture_output=True)
        cli_walls.append(time.perf_counter() - t)

    h_in = min(r[0]["seconds"] for r in header)
    f_in = full[0]["seconds"]
    print(f"file: {size:,} B (sparse), 81 tensors")
    print(f"header-only verify: {h_in * 1e3:.2f} ms (imports excluded, best of {args.repeat}), "
          f"bytes read {header[0][0]['bytes_read']:,}, peak RSS {header[0][2] / 1024:.0f} MiB, "
          f"findings {header[0][0]['findings']}")
    l_in = load[0]["seconds"]
    print(f"baseline safetensors.torch.load_file: {l_in * 1e3:.0f} ms, tensor bytes {load[0]['bytes_read']:,}, "
          f"peak RSS {load[2] / 1024:.0f} MiB -> header-only is {l_in / h_in:.0f}x faster")
    print(f"baseline load_file + one pass over the values: {f_in * 1e3:.0f} ms, peak RSS {full[2] / 1024:.0f} MiB"
          f" -> header-only is {f_in / h_in:.0f}x faster")
    print(f"CLI end to end (fresh process, import included): best {min(cli_walls):.2f} s, "
          f"worst {max(cli_walls):.2f} s")
    shutil.rmtree(d, ignore_errors=True)


if __name__ == "__main__":
    main()
