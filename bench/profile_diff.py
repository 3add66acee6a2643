#!/usr/bin/env python3
"""Where one diff's CPU time goes, by phase: cProfile with process_time over an in-process diff of a pair built by
bench_compute.py (DIR/ref and DIR/<case>), after importing torch (timed on its own).

    PYTHONPATH=. python bench/profile_diff.py /tmp/dflash2-bench-compute w4a16 [dense w8a16 fp8 nvfp4 ...]

Phases: import_torch; identical_bytes (dense tensors compared from their bytes, identical.py); read_rows (the
row reads of both sides for the float path); decode (ct_decode.py); noise_model (the rest of dequantize_rows:
the predicted rounding error); figures (the dot products, difference and min / max per slice); other (opening
the sides, Python between the calls, the profiler's own cost on small calls). One JSON line per case.
"""

from __future__ import annotations

import argparse
import cProfile
import json
import pstats
import time
from typing import Any


def profile(base: str, case: str) -> dict[str, Any]:
    from dflash2_ckpt.diff import diff

    pr = cProfile.Profile(time.process_time)
    c0 = time.process_time()
    pr.enable()
    res = diff(f"{base}/{case}", f"{base}/ref", threads=1)
    pr.disable()
    total = time.process_time() - c0
    st: Any = pstats.Stats(pr).stats  # type: ignore[attr-defined]

    def key(file_part: str, fn: str) -> Any:
        return next((k for k in st if file_part in k[0] and k[2] == fn), None)

    def cum(file_part: str, fn: str) -> float:
        k = key(file_part, fn)
        return float(st[k][3]) if k else 0.0

    k_read, k_dq = key("diff/sides.py", "_read"), key("diff/dequant.py", "dequantize_rows")
    read_in_dq = float(st[k_read][4].get(k_dq, (0, 0, 0, 0))[3]) if k_read and k_dq else 0.0
    decode = sum(cum("diff/ct_decode.py", f) for f in ("pack", "float_quantized", "nvfp4"))
    out: dict[str, Any] = {
        "case": case,
        "diff_total": total,
        "identical_bytes": cum("diff/identical.py", "identical"),
        "read_rows": cum("diff/sides.py", "_read"),
        "decode": decode,
        "noise_model": cum("diff/dequant.py", "dequantize_rows") - decode - read_in_dq,
        "figures": cum("diff/__init__.py", "_accumulate"),
    }
    out["other"] = total - sum(v for k, v in out.items() if k not in ("case", "diff_total"))
    out = {k: round(v, 3) if isinstance(v, float) else v for k, v in out.items()}
    out["counts"] = res.counts
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dir", help="bench_compute.py's directory (DIR/ref and one DIR/<case> per case)")
    ap.add_argument("cases", nargs="+", help="dense, w4a16, w8a16, fp8, nvfp4, ...")
    args = ap.parse_args()
    t = time.process_time()
    import torch

    torch.set_num_threads(1)
    imported = round(time.process_time() - t, 3)
    for case in args.cases:
        print(json.dumps({"import_torch": imported, **profile(args.dir, case)}), flush=True)


if __name__ == "__main__":
    main()
