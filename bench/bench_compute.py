#!/usr/bin/env python3
"""The compute side of issue 23: diff against `cat`, accept against --max-new-tokens, the CPU smoke and the
effect of the torch thread choice, each before (commit 7aaf2fd, unpacked with `git archive` into --old) and
after (this tree), in paired, interleaved whole processes with medians, CPU time, peak RSS and the load.

    python bench/bench_compute.py [--dir /tmp/dflash2-bench-compute] [--old DIR] [--gb 0.5] [--repeat 3]
        [--only diff,accept,threads,smoke] [--schemes dense,w4a16,w8a16,fp8,nvfp4]

--old: an unpacked tree to compare against (e.g. `git -C MAIN archive HEAD | tar -x -C DIR`); when DIR holds
no dflash2_ckpt, commit 7aaf2fd is unpacked there. --schemes: the diff cases to run (one locked run each keeps
a run of the 2 GB pairs under 10 minutes).

diff: a BF16 reference (H 2048 geometry of bench_convert.py, random normal x 0.02) and its derived
checkpoints: a dense copy and W4A16 (group 128) / W8A16 / FP8 / NVFP4 made by compressed-tensors module by
module; `cat REF DERIVED > /dev/null`, the old and the new `dflash2-ckpt diff` alternate, page cache warm.
accept: the tiny pair, all 8 prompts, in one process per run (after loading, OMP_NUM_THREADS=1): the old
and the new reference loop, the new with --batch 8, the greedy loop and the target's own generate().
threads: the new diff (dense copy of the reference) and accept (CLI, 4 prompts x 64 tokens) with the default
choice against each of --threads-counts (2: torch's own default on this 2-core machine; 1), interleaved, with
the count and load average the default chose in each run.
--accept-tokens 32,64,128,256 and --accept-repeat 1: the accept rows to run (one value per locked run keeps
each under 10 minutes); --threads-counts 2,1: the forced counts of the threads rows.
smoke: the H 2048, 5-layer v2 layout, CPU, old against new, once each.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import statistics
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

PAIR = ROOT / "fixtures" / "pairs" / "tiny"
MEASURE = """
import json, os, resource, subprocess, sys, time
load0 = os.getloadavg()[0]
t = time.perf_counter()
p = subprocess.run(sys.argv[2:], stdout=subprocess.PIPE, stderr=subprocess.PIPE, shell=len(sys.argv) == 3,
                   env=json.loads(sys.argv[1]))
u = resource.getrusage(resource.RUSAGE_CHILDREN)
print(json.dumps({"rc": p.returncode, "seconds": time.perf_counter() - t, "cpu": u.ru_utime + u.ru_stime,
                  "max_rss_mib": u.ru_maxrss / 1024, "load": [load0, os.getloadavg()[0]],
                  "stdout": p.stdout.decode(), "stderr": p.stderr.decode()[-2000:]}))
"""


def env_for(code: Path, **extra: str) -> dict[str, str]:
    env = {
        "PYTHONPATH": str(code),
        "PATH": "/usr/bin:/bin",
        "HOME": os.environ.get("HOME", "/root"),
        "TRITON_INTERPRET": "1",
        **extra,
    }
    return env


def measure(cmd: list[str] | str, env: dict[str, str]) -> dict[str, Any]:
    """Run in the code's own directory: `python -c` and `-m` put the working directory before PYTHONPATH."""
    args = [sys.executable, "-c", MEASURE, json.dumps(env)] + ([cmd] if isinstance(cmd, str) else cmd)
    out = subprocess.run(args, check=True, capture_output=True, text=True, cwd=env["PYTHONPATH"]).stdout
    return json.loads(out.strip().splitlines()[-1])


def med(runs: list[dict[str, Any]], key: str) -> float:
    return statistics.median(r[key] for r in runs)


def loads(runs: list[dict[str, Any]]) -> str:
    xs = [x for r in runs for x in r["load"]]
    return f"{min(xs):.1f}-{max(xs):.1f}"


def old_tree(path: Path) -> Path:
    if not (path / "dflash2_ckpt").is_dir():
        path.mkdir(parents=True, exist_ok=True)
        arc = subprocess.run(
            ["git", "archive", "7aaf2fd", "dflash2_ckpt"], cwd=ROOT, check=True, capture_output=True
        )
        subprocess.run(["tar", "-x", "-C", str(path)], input=arc.stdout, check=True)
    return path


# --- diff ---------------------------------------------------------------------------------------------------


def build_pairs(base: Path, gb: float, schemes: list[str]) -> tuple[Path, dict[str, Path]]:
    import torch
    from bench_convert import config, nbytes, tensors_for

    import quantized
    from dflash2_ckpt.dev.synth import write_config, write_safetensors

    layers = 1
    while nbytes(tensors_for(config(layers))) < gb * 1e9:
        layers += 1
    cfg = config(layers)
    dense = tensors_for(cfg)
    shapes = {n: s for n, _, s in dense}

    def values(name: str, shape: tuple[int, ...]) -> torch.Tensor:
        g = torch.Generator().manual_seed(zlib.crc32(name.encode()))
        return (0.02 * torch.randn(shape, generator=g)).to(torch.bfloat16)

    def raw(t: torch.Tensor) -> bytes:
        return (
            t.contiguous().view(torch.uint8).numpy().tobytes()
            if t.dtype != torch.uint8
            else t.numpy().tobytes()
        )

    ref = base / "ref"
    if not (ref / "model.safetensors").is_file():
        ref.mkdir(parents=True, exist_ok=True)
        write_safetensors(ref / "model.safetensors", dense, lambda n, _: raw(values(n, shapes[n])))
        write_config(ref, cfg)
    out = {"dense": base / "dense"}
    if not (out["dense"] / "model.safetensors").is_file():
        shutil.copytree(ref, out["dense"], dirs_exist_ok=True)
    quantizable = {
        n
        for n, _, s in dense
        if len(s) == 2
        and n.endswith(".weight")
        and "kernel_projection" not in n
        and "candidate_selector" not in n
    }
    names = {
        torch.int32: "I32",
        torch.int64: "I64",
        torch.bfloat16: "BF16",
        torch.float32: "F32",
        torch.uint8: "U8",
        torch.float8_e4m3fn: "F8_E4M3",
    }
    for scheme in schemes:
        der = base / scheme
        out[scheme] = der
        if (der / "model.safetensors").is_file():
            continue
        der.mkdir(parents=True, exist_ok=True)
        over = {"group_size": 128} if scheme == "w4a16" else None
        rows: list[tuple[str, str, tuple[int, ...]]] = []
        qc: dict[str, Any] = {}
        for n, dt, s in dense:
            if n not in quantizable:
                rows.append((n, dt, s))
                continue
            sd, qc = quantized.compress(
                {"x.weight": torch.zeros(16, s[1], dtype=torch.bfloat16)}, scheme, [], over
            )
            mod = n[: -len(".weight")]
            rows += [
                (
                    f"{mod}.{k[2:]}",
                    names[v.dtype],
                    (s[0], *v.shape[1:])
                    if v.ndim == 2 and v.shape[0] == 16
                    else ((s[0] // 8, *v.shape[1:]) if v.ndim == 2 else tuple(v.shape)),
                )
                for k, v in sorted(sd.items())
            ]
        cache: dict[str, dict[str, Any]] = {}

        def data(name: str, _: int, scheme: str = scheme, over: Any = over) -> bytes:
            mod, _, suffix = name.rpartition(".")
            if f"{mod}.weight" not in quantizable:
                return raw(values(name, shapes[name]))
            if mod not in cache:
                cache.clear()
                cache[mod], _q = quantized.compress(
                    {"x.weight": values(f"{mod}.weight", shapes[f"{mod}.weight"])}, scheme, [], over
                )
            return raw(cache[mod][f"x.{suffix}"])

        write_safetensors(der / "model.safetensors", rows, data)
        qc["ignore"] = quantized.IGNORE
        write_config(der, {**cfg, "quantization_config": qc})
    return ref, out


def bench_diff(
    base: Path, old: Path, gb: float, repeat: int, results: dict[str, Any], cases: set[str]
) -> None:
    from dflash2_ckpt.checkpoint import open_checkpoint

    schemes = [s for s in ("w4a16", "w8a16", "fp8", "nvfp4") if s in cases]  # build only what is measured
    t = time.perf_counter()
    ref, derived = build_pairs(base, gb, schemes)
    print(f"pairs built in {time.perf_counter() - t:.0f} s", flush=True)
    rows = []
    for case, der in derived.items():
        if case not in cases:
            continue
        a, b = ref / "model.safetensors", der / "model.safetensors"
        subprocess.run(f"cat {a} {b} > /dev/null", shell=True, check=True)
        runs: dict[str, list[dict[str, Any]]] = {"cat": [], "old": [], "new": []}
        cmd = [
            sys.executable,
            "-m",
            "dflash2_ckpt",
            "diff",
            str(der),
            "--reference",
            str(ref),
            "--format",
            "json",
        ]
        for _ in range(repeat):
            runs["cat"].append(measure(f"cat {a} {b} > /dev/null", env_for(ROOT)))
            runs["old"].append(measure(cmd, env_for(old)))
            runs["new"].append(measure(cmd, env_for(ROOT)))
        new_doc = json.loads(runs["new"][-1]["stdout"])
        values = sum(math.prod(t.shape) for t in open_checkpoint(ref).tensors.values())
        # after start-up: the diff's own clock (its JSON "seconds": opening the sides to the last figure,
        # after the interpreter, the CLI and its imports), per logical value of the reference
        inproc = {k: [json.loads(x["stdout"])["seconds"] for x in v] for k, v in runs.items() if k != "cat"}
        row = {
            "case": case,
            "bytes": a.stat().st_size + b.stat().st_size,
            "counts": new_doc["counts"],
            "threads": new_doc.get("threads"),
            "load": loads(sum(runs.values(), [])),
            "values": values,
            **{f"{k}_ns_per_value": [round(x / values * 1e9, 2) for x in v] for k, v in inproc.items()},
            "ranges": {
                k: [round(min(x["seconds"] for x in v), 2), round(max(x["seconds"] for x in v), 2)]
                for k, v in runs.items()
            },
            **{f"{k}_{m}": med(v, m) for k, v in runs.items() for m in ("seconds", "cpu", "max_rss_mib")},
        }
        rows.append(row)
        print(json.dumps(row), flush=True)
    imports = {
        what: [measure([sys.executable, "-c", f"import {what}"], env_for(ROOT)) for _ in range(repeat)]
        for what in ("numpy", "dflash2_ckpt.diff", "torch", "compressed_tensors.compressors")
    }
    results["diff"] = {
        "rows": rows,
        "imports": {k: {m: med(v, m) for m in ("seconds", "cpu", "max_rss_mib")} for k, v in imports.items()},
        "import_load": loads(sum(imports.values(), [])),
    }


# --- accept --------------------------------------------------------------------------------------------------

ACCEPT = """
import json, sys, time, torch
torch.set_num_threads(1)
from pathlib import Path
from dflash2_ckpt.accept import loop
from dflash2_ckpt.accept.prompts import load_prompts
from dflash2_ckpt.accept.target import load_target
from dflash2_ckpt.smoke.drafting import load_drafter
pair, n, full = Path(sys.argv[1]), int(sys.argv[2]), sys.argv[3] == "full"
drafter = load_drafter(pair / "drafter", target=pair / "target", device="cpu")
target = load_target(pair / "target", drafter.spec.target_layer_ids, torch.device("cpu"))
plist, _ = load_prompts(target.tokenizer, None, pair / "target")
loop.speculative(target, drafter, plist[0].ids, 8)
out = {}
def clock(key, t, c):     # wall and CPU (this process) of one phase: the wall moves with the machine's load
    out[key], out[key + "_cpu"] = time.perf_counter() - t, time.process_time() - c
t, c = time.perf_counter(), time.process_time(); spec = [loop.speculative(target, drafter, p.ids, n) for p in plist]
clock("speculative", t, c)
out["tokens"] = sum(len(s.tokens) for s in spec)
if full and hasattr(loop, "speculative_batch"):
    t, c = time.perf_counter(), time.process_time(); b = loop.speculative_batch(target, drafter, [p.ids for p in plist], n)
    clock("batch8", t, c)
    out["batch_same"] = [x.tokens for x in b] == [s.tokens for s in spec]
t, c = time.perf_counter(), time.process_time(); ref = [loop.greedy(target, p.ids, n) for p in plist]
clock("greedy", t, c)
out["lossless"] = [r.tokens for r in ref] == [s.tokens for s in spec]
out["spec_tokens"] = [s.tokens for s in spec]
if not full:        # the old tree: only its loop is compared (batch and generate() are the new tree's rows)
    print(json.dumps(out))
    raise SystemExit(0)
t, c = time.perf_counter(), time.process_time(); gen = []
for p in plist:
    x = torch.tensor([p.ids])
    with torch.no_grad():
        g = target.model.generate(x, attention_mask=torch.ones_like(x), max_new_tokens=n, do_sample=False,
                                  pad_token_id=target.pad_id if hasattr(target, "pad_id") else 0)
    gen.append(g[0, len(p.ids):].tolist())
clock("generate", t, c)
out["generate_same"] = [g[:len(r.tokens)] for g, r in zip(gen, ref)] == [r.tokens for r in ref]
print(json.dumps(out))
"""


def bench_accept(old: Path, repeat: int, tokens: list[int], results: dict[str, Any]) -> None:
    rows = []
    for n in tokens:
        runs: dict[str, list[dict[str, Any]]] = {"old": [], "new": []}
        for _ in range(repeat):
            for which, code in (("old", old), ("new", ROOT)):
                r = measure(
                    [sys.executable, "-c", ACCEPT, str(PAIR), str(n), "full" if which == "new" else "loop"],
                    env_for(code, OMP_NUM_THREADS="1"),
                )
                if r["rc"]:
                    raise SystemExit(r["stderr"])
                r.update(json.loads(r["stdout"].strip().splitlines()[-1]))
                runs[which].append(r)
        row = {
            "max_new_tokens": n,
            "tokens": runs["new"][0]["tokens"],
            "load": loads(runs["old"] + runs["new"]),
            "old_speculative_s": med(runs["old"], "speculative"),
            "new_speculative_s": med(runs["new"], "speculative"),
            "new_batch8_s": med(runs["new"], "batch8"),
            "greedy_s": med(runs["new"], "greedy"),
            "generate_s": med(runs["new"], "generate"),
            "old_speculative_cpu": med(runs["old"], "speculative_cpu"),
            "new_speculative_cpu": med(runs["new"], "speculative_cpu"),
            "new_batch8_cpu": med(runs["new"], "batch8_cpu"),
            "greedy_cpu": med(runs["new"], "greedy_cpu"),
            "generate_cpu": med(runs["new"], "generate_cpu"),
            "lossless": all(r["lossless"] for r in runs["old"] + runs["new"]),
            "batch_same": all(r["batch_same"] for r in runs["new"]),
            "generate_same": all(r["generate_same"] for r in runs["new"]),
            "same_tokens_old_new": all(
                r["spec_tokens"] == runs["new"][0]["spec_tokens"] for r in runs["old"] + runs["new"]
            ),
        }
        rows.append(row)
        print(json.dumps(row), flush=True)
    results["accept"] = rows


# --- threads ---------------------------------------------------------------------------------------------------


def bench_threads(base: Path, repeat: int, counts: list[int], results: dict[str, Any]) -> None:
    """The default choice against each forced count, interleaved run by run (the order alternating)."""
    ref, _ = build_pairs(base, 0.5, [])
    der = base / "dense"
    diff = [
        sys.executable,
        "-m",
        "dflash2_ckpt",
        "diff",
        str(der),
        "--reference",
        str(ref),
        "--format",
        "json",
    ]
    acc = [
        sys.executable,
        "-m",
        "dflash2_ckpt",
        "accept",
        str(PAIR / "drafter"),
        "--target",
        str(PAIR / "target"),
        "--limit",
        "4",
        "--max-new-tokens",
        "64",
        "--device",
        "cpu",
        "--format",
        "json",
    ]
    rows = []
    for label, cmd in (("diff dense", diff), ("accept 4 x 64", acc)):
        variants = {"default": cmd, **{f"--threads {k}": cmd + ["--threads", str(k)] for k in counts}}
        runs: dict[str, list[dict[str, Any]]] = {k: [] for k in variants}
        for i in range(repeat):
            order = list(variants) if i % 2 == 0 else list(reversed(variants))
            for k in order:
                r = measure(variants[k], env_for(ROOT))
                if r["rc"] not in (0, 1):
                    raise SystemExit(r["stderr"])
                r["threads"] = json.loads(r["stdout"]).get("threads", {})
                runs[k].append(r)
        row = {
            "what": label,
            "default_chose": [
                (r["threads"].get("threads"), r["threads"].get("load_average")) for r in runs["default"]
            ],
            "load": loads(sum(runs.values(), [])),
            **{f"{k}_{m}": med(v, m) for k, v in runs.items() for m in ("seconds", "cpu", "max_rss_mib")},
        }
        rows.append(row)
        print(json.dumps(row), flush=True)
    results["threads"] = rows


# --- smoke -----------------------------------------------------------------------------------------------------


def bench_smoke(base: Path, old: Path, results: dict[str, Any]) -> None:
    import numpy as np
    from bench_convert import config, tensors_for

    from dflash2_ckpt.dev.synth import materialise

    d = base / "smoke-h2048"
    cfg = config(5)
    if not (d / "model.safetensors").is_file():
        rng = np.random.default_rng(0)
        materialise(
            d,
            cfg,
            tensors_for(cfg),  # BF16: the upper halves of float32 normals x 0.02
            data=lambda n, k: (
                ((0.02 * rng.standard_normal(k // 2)).astype("<f4").view("<u4") >> 16).astype("<u2").tobytes()
            ),
        )
    rows = []
    for which, code in (("old", old), ("new", ROOT)):
        r = measure(
            [sys.executable, "-m", "dflash2_ckpt", "smoke", str(d), "--device", "cpu", "--format", "json"],
            env_for(code, OMP_NUM_THREADS="1"),
        )
        doc = json.loads(r["stdout"])
        row = {
            "code": which,
            "seconds": r["seconds"],
            "cpu": r["cpu"],
            "max_rss_mib": r["max_rss_mib"],
            "load": f"{r['load'][0]:.1f}-{r['load'][1]:.1f}",
            "passed": doc["passed"],
            "estimate_s": doc["estimate"]["seconds"],
            "triton_conv": doc["estimate"].get("triton_conv", "every layer"),
            "conv_triton_s": doc["timings_s"].get(
                "forward_triton_conv", doc["timings_s"].get("conv_triton_sample")
            ),
            "errors": sorted(f["code"] for f in doc["findings"] if f["severity"] == "error"),
        }
        rows.append(row)
        print(json.dumps(row), flush=True)
    results["smoke"] = {"layout": "H 2048, intermediate 8192, 5 layers, vocab 151936, BF16", "rows": rows}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--dir", default="/tmp/dflash2-bench-compute")
    ap.add_argument("--old", default="/tmp/dflash2-bench-compute-old")
    ap.add_argument("--gb", type=float, default=0.5)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--only", default="diff,accept,threads,smoke")
    ap.add_argument("--schemes", default="dense,w4a16,w8a16,fp8,nvfp4")
    ap.add_argument("--accept-repeat", type=int, default=1)
    ap.add_argument("--json", default=None)
    ap.add_argument(
        "--accept-tokens", default="32,64,128,256", help="--max-new-tokens values, comma-separated"
    )
    ap.add_argument(
        "--threads-counts", default="2,1", help="forced --threads values the default is paired with"
    )
    args = ap.parse_args()
    base, old = Path(args.dir), old_tree(Path(args.old))
    base.mkdir(parents=True, exist_ok=True)
    only = set(args.only.split(","))
    results: dict[str, Any] = {
        "uptime_start": subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    }
    if "diff" in only:
        bench_diff(base, old, args.gb, args.repeat, results, set(args.schemes.split(",")))
    if "accept" in only:
        bench_accept(old, args.accept_repeat, [int(x) for x in args.accept_tokens.split(",")], results)
    if "threads" in only:
        bench_threads(base, args.repeat, [int(x) for x in args.threads_counts.split(",")], results)
    if "smoke" in only:
        bench_smoke(base, old, results)
    results["uptime_end"] = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1) + "\n")
    print(json.dumps(results))


if __name__ == "__main__":
    main()
