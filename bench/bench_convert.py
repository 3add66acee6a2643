#!/usr/bin/env python3
"""convert (streamed, hashed, verified, fsync'd) vs `cp` vs a naive load-everything-then-save conversion.

    python bench/bench_convert.py [--dir /tmp/dflash2-bench-convert] [--sizes 0.5,2] [--repeat 2]

For each size, writes a non-sparse nested DFlash2 checkpoint (BF16, random bytes, one model.safetensors;
geometry H=2048, I=8192, 16 heads / 4 kv heads, vocab 151936, rank 256, layer count chosen for the size),
then, in one run, each command in its own subprocess so its peak RSS is its own:
  cp          cp -r SRC DST
  cp+sync     cp -r SRC DST && sync            (convert fsyncs its output; this is the fair comparison)
  convert     dflash2-ckpt convert SRC -o DST --to flat --verifier-name bench/target --verifier-arch Qwen3ForCausalLM
  naive       safetensors.torch load_file + save_file of the renamed dict, plus the config
The source is read once before timing so every command reads it from the page cache. `sync` runs
between commands (untimed) so one command's writeback does not land on the next. Outputs are
deleted after each command and everything at the end.
"""
from __future__ import annotations

import argparse
import json
import random
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from dflash2_ckpt.formats.parse import to_spec  # noqa: E402
from dflash2_ckpt.checkpoint.layout import expected_tensors  # noqa: E402
from dflash2_ckpt.dev.synth import materialise  # noqa: E402

MEASURE = """
import json, resource, subprocess, sys, time
t = time.perf_counter()
rc = subprocess.call(sys.argv[1:], stdout=subprocess.DEVNULL)
print(json.dumps({"rc": rc, "seconds": time.perf_counter() - t,
                  "max_rss_mib": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024}))
"""
NAIVE = """
import json, sys
from pathlib import Path
from safetensors import safe_open
from safetensors.torch import load_file, save_file
src, dst = Path(sys.argv[1]), Path(sys.argv[2])
dst.mkdir()
tensors = load_file(src / "model.safetensors")
with safe_open(src / "model.safetensors", "pt") as f:
    meta = f.metadata()
save_file(tensors, dst / "model.safetensors", metadata=meta)
cfg = json.loads((src / "config.json").read_text())
(dst / "config.json").write_text(json.dumps(cfg, indent=2))
"""


def config(layers: int) -> dict[str, Any]:
    return {"architectures": ["DFlash2DraftModel"], "model_type": "qwen3", "hidden_size": 2048,
            "intermediate_size": 8192, "num_hidden_layers": layers, "num_attention_heads": 16,
            "num_key_value_heads": 4, "head_dim": 128, "vocab_size": 151936, "rms_norm_eps": 1e-6,
            "hidden_act": "silu", "max_position_embeddings": 32768, "layer_types": ["sliding_attention"] * layers,
            "sliding_window": 2048, "rope_parameters": {"rope_theta": 1000000.0, "rope_type": "default"},
            "is_causal": False, "dtype": "bfloat16", "num_target_layers": 36,
            "dflash_config": {"target_layer_ids": [1, 9, 17, 25, 33], "block_size": 8, "mask_token_id": 151669,
                              "conv_kernel_size": 2, "conv_group_size": 16, "selector_rank": 256,
                              "selector_top_k": 16, "causal": False}}


def tensors_for(cfg: dict[str, Any]) -> list[tuple[str, str, tuple[int, ...]]]:
    spec, _ = to_spec(cfg)
    assert spec is not None
    return [(e.name, "BF16", e.shape) for e in expected_tensors(spec)]


def nbytes(ts: list[tuple[str, str, tuple[int, ...]]]) -> int:
    total = 0
    for _, _, shape in ts:
        n = 2
        for d in shape:
            n *= d
        total += n
    return total


def build(directory: Path, gib: float) -> int:
    layers = 1       # the smallest drafter of at least the asked size
    while nbytes(tensors_for(config(layers))) < gib * 1e9:
        layers += 1
    cfg = config(layers)
    rng = random.Random(0)
    materialise(directory, cfg, tensors_for(cfg), data=lambda name, n: rng.randbytes(n))
    return (directory / "model.safetensors").stat().st_size


def measure(cmd: list[str]) -> dict[str, Any]:
    out = subprocess.run([sys.executable, "-c", MEASURE, *cmd], capture_output=True, text=True, check=True)
    res = json.loads(out.stdout.strip().splitlines()[-1])
    if res["rc"] != 0:
        raise RuntimeError(f"{cmd} failed with {res['rc']}")
    return res


def run_size(work: Path, gib: float, repeat: int) -> dict[str, Any]:
    src = work / f"src-{gib}"
    size = build(src, gib)
    subprocess.run(["cat", str(src / "model.safetensors")], stdout=subprocess.DEVNULL, check=True)
    dst = work / "dst"
    cmds = {
        "cp": ["cp", "-r", str(src), str(dst)],
        "cp+sync": ["sh", "-c", f"cp -r '{src}' '{dst}' && sync"],
        "convert": [sys.executable, "-m", "dflash2_ckpt", "convert", str(src), "-o", str(dst), "--to", "flat",
                    "--verifier-name", "bench/target", "--verifier-arch", "Qwen3ForCausalLM"],
        "naive": [sys.executable, "-c", NAIVE, str(src), str(dst)],
    }
    results: dict[str, list[dict[str, Any]]] = {k: [] for k in cmds}
    for _ in range(repeat):
        for name, cmd in cmds.items():
            subprocess.run(["sync"], check=True)
            results[name].append(measure(cmd))
            shutil.rmtree(dst)
    shutil.rmtree(src)
    best = {k: min(v, key=lambda r: r["seconds"]) for k, v in results.items()}
    return {"gib": gib, "file_bytes": size, "runs": results, "best": best,
            "convert_over_cp": best["convert"]["seconds"] / best["cp"]["seconds"],
            "convert_over_cp_sync": best["convert"]["seconds"] / best["cp+sync"]["seconds"],
            "naive_over_cp": best["naive"]["seconds"] / best["cp"]["seconds"]}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--dir", default="/tmp/dflash2-bench-convert")
    ap.add_argument("--sizes", default="0.5,2")
    ap.add_argument("--repeat", type=int, default=2)
    args = ap.parse_args()
    work = Path(args.dir)
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    try:
        rows = [run_size(work, float(s), args.repeat) for s in args.sizes.split(",")]
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(json.dumps(rows, indent=2))
    print()
    print("| size | file bytes | cp s | cp+sync s | convert s | naive s | convert/cp | convert/(cp+sync) | "
          "convert peak RSS MiB | naive peak RSS MiB |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        b = r["best"]
        print(f"| {r['gib']} GB | {r['file_bytes']:,} | {b['cp']['seconds']:.2f} | {b['cp+sync']['seconds']:.2f} | "
              f"{b['convert']['seconds']:.2f} | {b['naive']['seconds']:.2f} | {r['convert_over_cp']:.2f}x | "
              f"{r['convert_over_cp_sync']:.2f}x | {b['convert']['max_rss_mib']:.0f} | "
              f"{b['naive']['max_rss_mib']:.0f} |")


if __name__ == "__main__":
    main()
