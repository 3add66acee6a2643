#!/usr/bin/env python3
"""Quantized drafters: header-level verify of the 27B layout per scheme vs dense, and `diff` of a >= 2 GB pair.

    python bench/bench_quant.py [--dir /tmp/dflash2-bench-quant] [--gb 2] [--repeat 5] [--skip-diff]

verify: the published Qwen3.8-27B-DFlash2 layout (fixtures/real) and its W4A16 / W8A16 / FP8 / NVFP4
layouts (fixtures/quantized/*.tensors.tsv, made by compressed-tensors) materialised as sparse files;
each verify in its own subprocess, time in-process after imports (best of --repeat), bytes read.

diff: a non-sparse BF16 reference of at least --gb GB (random normal values x 0.02, H 2048 geometry as in
bench_convert.py) and its W4A16 (group 128) derived checkpoint made by compressed-tensors module by
module; in one run, `cat REF DERIVED > /dev/null` (both files read once; warm page cache: both are read
once untimed first) and `dflash2-ckpt diff DERIVED --reference REF`, each in its own subprocess with
its peak RSS.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import time
import zlib
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT / "fixtures"))

from dflash2_ckpt.dev.synth import materialise, read_tensor_list, write_config, write_safetensors  # noqa: E402

REAL = ROOT / "fixtures" / "real"
Q = ROOT / "fixtures" / "quantized"
VERIFY = """
import sys, time, json
from dflash2_ckpt.usecases.verify import verify
t = time.perf_counter()
r = verify(sys.argv[1])
print(json.dumps({"seconds": time.perf_counter() - t, "bytes_read": r.bytes_read,
                  "errors": sorted(f.code for f in r.findings if f.severity == "error")}))
"""
MEASURE = """
import json, resource, subprocess, sys, time
t = time.perf_counter()
rc = subprocess.call(sys.argv[1:], stdout=subprocess.DEVNULL, shell=len(sys.argv) == 2)
print(json.dumps({"rc": rc, "seconds": time.perf_counter() - t,
                  "max_rss_mib": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024}))
"""


def child(code: str, *args: str) -> dict[str, Any]:
    out = subprocess.run(
        [sys.executable, "-c", code, *args],
        check=True,
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
    ).stdout
    return json.loads(out.strip().splitlines()[-1])


def bench_verify(base: Path, repeat: int) -> None:
    rows = []
    layouts = [("dense", REAL / "z-lab_Qwen3.8-27B-DFlash2")] + [
        (s, Q / f"qwen3.8-27b-{s}") for s in ("w4a16", "w8a16", "fp8", "nvfp4")
    ]
    for label, stem in layouts:
        d = base / f"verify-{label}"
        shutil.rmtree(d, ignore_errors=True)
        materialise(
            d,
            json.loads(Path(f"{stem}.config.json").read_text()),
            read_tensor_list(Path(f"{stem}.tensors.tsv")),
        )
        runs = [child(VERIFY, str(d)) for _ in range(repeat)]
        size = (d / "model.safetensors").stat().st_size
        rows.append(
            (
                label,
                size,
                len(read_tensor_list(Path(f"{stem}.tensors.tsv"))),
                runs[0]["bytes_read"],
                min(r["seconds"] for r in runs) * 1e3,
                runs[0]["errors"],
            )
        )
        shutil.rmtree(d)
    print("| layout | file bytes | tensors | bytes read | verify ms (best) | errors |")
    print("|---|---|---|---|---|---|")
    for label, size, n, read, ms, errs in rows:
        print(f"| {label} | {size:,} | {n} | {read:,} | {ms:.2f} | {errs or '-'} |")


def build_pair(base: Path, gb: float) -> tuple[Path, Path]:
    import torch
    from bench_convert import config, nbytes, tensors_for

    import quantized

    layers = 1
    while nbytes(tensors_for(config(layers))) < gb * 1e9:
        layers += 1
    cfg = config(layers)
    dense = tensors_for(cfg)

    def values(name: str, shape: tuple[int, ...]) -> torch.Tensor:
        g = torch.Generator().manual_seed(zlib.crc32(name.encode()))
        return (0.02 * torch.randn(shape, generator=g)).to(torch.bfloat16)

    def raw(t: torch.Tensor) -> bytes:
        return (
            t.contiguous().view(torch.uint8).numpy().tobytes()
            if t.dtype != torch.uint8
            else t.numpy().tobytes()
        )

    ref, der = base / "ref", base / "w4a16"
    for d in (ref, der):
        shutil.rmtree(d, ignore_errors=True)
        d.mkdir(parents=True)
    shapes = {n: s for n, _, s in dense}
    write_safetensors(ref / "model.safetensors", dense, lambda n, _: raw(values(n, shapes[n])))
    write_config(ref, cfg)
    quantizable = {
        n
        for n, _, s in dense
        if len(s) == 2
        and n.endswith(".weight")
        and "kernel_projection" not in n
        and "candidate_selector" not in n
    }
    rows: list[tuple[str, str, tuple[int, ...]]] = []
    qc: dict[str, Any] = {}
    for n, dt, s in dense:
        if n not in quantizable:
            rows.append((n, dt, s))
            continue
        sd, qc = quantized.compress({"x.weight": torch.zeros(8, s[1], dtype=torch.bfloat16)}, "w4a16", [], {})
        mod = n[: -len(".weight")]
        rows += [
            (
                f"{mod}.{k[2:]}",
                {torch.int32: "I32", torch.int64: "I64", torch.bfloat16: "BF16"}[v.dtype],
                (s[0], *v.shape[1:]) if v.ndim == 2 else tuple(v.shape),
            )
            for k, v in sorted(sd.items())
        ]
    cache: dict[str, dict[str, Any]] = {}

    def data(name: str, _: int) -> bytes:
        mod, _, suffix = name.rpartition(".")
        if f"{mod}.weight" not in quantizable:
            return raw(values(name, shapes[name]))
        if mod not in cache:
            cache.clear()
            cache[mod], _q = quantized.compress(
                {"x.weight": values(f"{mod}.weight", shapes[f"{mod}.weight"])}, "w4a16", [], {}
            )
        return raw(cache[mod][f"x.{suffix}"])

    write_safetensors(der / "model.safetensors", rows, data)
    qc["ignore"] = quantized.IGNORE
    write_config(der, {**cfg, "quantization_config": qc})
    return ref, der


def bench_diff(base: Path, gb: float) -> None:
    t = time.perf_counter()
    ref, der = build_pair(base, gb)
    built = time.perf_counter() - t
    a, b = ref / "model.safetensors", der / "model.safetensors"
    subprocess.run(f"cat {a} {b} > /dev/null", shell=True, check=True)  # warm: both runs read from cache
    cat = child(MEASURE, f"cat {a} {b} > /dev/null")
    receipt = base / "receipt.json"
    diff = child(
        MEASURE,
        sys.executable,
        "-m",
        "dflash2_ckpt",
        "diff",
        str(der),
        "--reference",
        str(ref),
        "--receipt",
        str(receipt),
    )
    nodiff = child(MEASURE, sys.executable, "-m", "dflash2_ckpt", "diff", str(der), "--reference", str(ref))
    imports = child(MEASURE, sys.executable, "-c", "import dflash2_ckpt.diff, compressed_tensors.compressors")
    rec = json.loads(receipt.read_text())
    worst = max(
        (x for x in rec["tensors"] if x["verdict"] == "quantization-noise"),
        key=lambda x: x["relative_rms_error"],
    )
    from dflash2_ckpt.checkpoint import open_checkpoint

    largest = max(t.nbytes for t in open_checkpoint(ref).tensors.values())
    print(
        f"reference {a.stat().st_size:,} B BF16, derived {b.stat().st_size:,} B W4A16 (built in {built:.0f} s, "
        "not timed below)"
    )
    print(f"cat both > /dev/null: {cat['seconds']:.2f} s")
    print(
        f"diff + receipt: {diff['seconds']:.2f} s ({diff['seconds'] / cat['seconds']:.1f}x cat), exit "
        f"{diff['rc']}, peak RSS {diff['max_rss_mib']:.0f} MiB"
    )
    print(
        f"diff alone: {nodiff['seconds']:.2f} s ({nodiff['seconds'] / cat['seconds']:.1f}x cat), peak RSS "
        f"{nodiff['max_rss_mib']:.0f} MiB"
    )
    print(
        f"largest tensor {largest / 2**20:.0f} MiB: bound 2 x largest + 256 MiB = "
        f"{(2 * largest) / 2**20 + 256:.0f} MiB; importing torch + compressed-tensors (+ transformers, which "
        f"it imports) alone peaks at {imports['max_rss_mib']:.0f} MiB, so the working set is "
        f"{nodiff['max_rss_mib'] - imports['max_rss_mib']:.0f} MiB"
    )
    print(
        f"verdicts {rec['counts']}; worst noise {worst['name']} rel RMS {worst['relative_rms_error']:.4f} "
        f"(predicted {worst['predicted_relative_rms_error']:.4f})"
    )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--dir", default="/tmp/dflash2-bench-quant")
    ap.add_argument("--gb", type=float, default=2.0)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--skip-diff", action="store_true")
    args = ap.parse_args()
    base = Path(args.dir)
    base.mkdir(parents=True, exist_ok=True)
    bench_verify(base, args.repeat)
    if not args.skip_diff:
        bench_diff(base, args.gb)
    shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
