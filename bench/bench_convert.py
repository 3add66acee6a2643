#!/usr/bin/env python3
"""convert --to flat (streamed, checked as it writes, fsync'd, verified) against `cp -r SRC DST && sync`.

    python bench/bench_convert.py [--dir /tmp/dflash2-bench-convert] [--sizes 0.5,2,4,8] [--kinds dense,w4a16]
                                  [--caches hot,cold] [--repeat 2]

For each kind and size, writes a non-sparse nested DFlash2 checkpoint (one model.safetensors, data a repeated
64 MiB random block):
  dense   BF16, H 2048, I 8192, 16 heads / 4 kv heads, vocab 151936, rank 256; layers chosen for the size
  w4a16   the Qwen3.8-27B-DFlash2 layout as compressed-tensors stores it in W4A16 (group 128; conv and
          selector dense; fixtures/quantized/qwen3.8-27b-w4a16.*), its layer count chosen for the size
then `repeat` paired, interleaved runs per cache state (bench/_paired.py): baseline `cp -r SRC DST && sync`,
candidate `python -m dflash2_ckpt convert SRC -o DST --to flat --verifier-name bench/target
--verifier-arch Qwen3ForCausalLM`. Reports medians, the ratio of each pair, CPU time, peak RSS and the load
average. The naive load-everything conversion of earlier rounds is left out: at 8 GB it would hold 8 GB.
Everything is deleted at the end (and each source once its size is done).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from dflash2_ckpt.checkpoint.layout import expected_tensors  # noqa: E402
from dflash2_ckpt.dev.synth import materialise  # noqa: E402
from dflash2_ckpt.formats.parse import to_spec  # noqa: E402

sys.path.insert(0, str(ROOT / "bench"))
import _paired  # noqa: E402

from dflash2_ckpt.dev.synth import read_tensor_list  # noqa: E402

QUANT = ROOT / "fixtures" / "quantized"


def config(layers: int) -> dict[str, Any]:
    return {
        "architectures": ["DFlash2DraftModel"],
        "model_type": "qwen3",
        "hidden_size": 2048,
        "intermediate_size": 8192,
        "num_hidden_layers": layers,
        "num_attention_heads": 16,
        "num_key_value_heads": 4,
        "head_dim": 128,
        "vocab_size": 151936,
        "rms_norm_eps": 1e-6,
        "hidden_act": "silu",
        "max_position_embeddings": 32768,
        "layer_types": ["sliding_attention"] * layers,
        "sliding_window": 2048,
        "rope_parameters": {"rope_theta": 1000000.0, "rope_type": "default"},
        "is_causal": False,
        "dtype": "bfloat16",
        "num_target_layers": 36,
        "dflash_config": {
            "target_layer_ids": [1, 9, 17, 25, 33],
            "block_size": 8,
            "mask_token_id": 151669,
            "conv_kernel_size": 2,
            "conv_group_size": 16,
            "selector_rank": 256,
            "selector_top_k": 16,
            "causal": False,
        },
    }


def tensors_for(cfg: dict[str, Any]) -> list[tuple[str, str, tuple[int, ...]]]:
    spec, _ = to_spec(cfg)
    assert spec is not None
    return [(e.name, "BF16", e.shape) for e in expected_tensors(spec)]


_WIDTH = {"BF16": 2, "F16": 2, "F32": 4, "I32": 4, "I64": 8, "I8": 1, "U8": 1, "F8_E4M3": 1}


def nbytes(ts: list[tuple[str, str, tuple[int, ...]]]) -> int:
    total = 0
    for _, dtype, shape in ts:
        n = _WIDTH[dtype]
        for d in shape:
            n *= d
        total += n
    return total


def quantized(layers: int) -> tuple[dict[str, Any], list[tuple[str, str, tuple[int, ...]]]]:
    """The 27B W4A16 layout with `layers` decoder layers (layer 0's tensors repeated)."""
    cfg = json.loads((QUANT / "qwen3.8-27b-w4a16.config.json").read_text())
    ts = read_tensor_list(QUANT / "qwen3.8-27b-w4a16.tensors.tsv")
    base = [t for t in ts if not t[0].startswith("layers.")]
    layer0 = [t for t in ts if t[0].startswith("layers.0.")]
    out = list(base)
    for i in range(layers):
        out += [(f"layers.{i}." + n[len("layers.0.") :], d, s) for n, d, s in layer0]
    cfg.update(num_hidden_layers=layers, layer_types=["sliding_attention"] * layers, max_window_layers=layers)
    return cfg, out


def layout(kind: str, gb: float) -> tuple[dict[str, Any], list[tuple[str, str, tuple[int, ...]]]]:
    layers = 1  # the smallest drafter of at least the asked size
    while True:
        if kind == "dense":
            cfg = config(layers)
            ts = tensors_for(cfg)
        else:
            cfg, ts = quantized(layers)
        if nbytes(ts) >= gb * 1e9 * 0.97:
            return cfg, ts
        layers += 1


def build(directory: Path, gb: float, kind: str = "dense") -> int:
    import random
    import zlib

    cfg, ts = layout(kind, gb)
    block = random.Random(0).randbytes(64 << 20)

    def data(name: str, n: int) -> bytes:
        at = zlib.crc32(name.encode()) % len(block)
        rep = (block[at:] + block[:at]) * (n // len(block) + 1)
        return rep[:n]

    materialise(directory, cfg, ts, data=data)
    return (directory / "model.safetensors").stat().st_size


def run_size(work: Path, gb: float, kind: str, caches: list[str], repeat: int) -> list[dict[str, Any]]:
    src = work / f"src-{kind}-{gb}"
    size = build(src, gb, kind)
    dst = work / "dst"
    base = ["sh", "-c", f"cp -r '{src}' '{dst}' && sync"]
    cand = [
        sys.executable,
        "-m",
        "dflash2_ckpt",
        "convert",
        str(src),
        "-o",
        str(dst),
        "--to",
        "flat",
        "--verifier-name",
        "bench/target",
        "--verifier-arch",
        "Qwen3ForCausalLM",
    ]
    out = []
    try:
        for cache in caches:
            r = _paired.paired(
                base, cand, [src], cache, repeat, lambda: shutil.rmtree(dst, ignore_errors=True)
            )
            r.update(kind=kind, gb=gb, file_bytes=size)
            out.append(r)
            print(_paired.row(f"convert --to flat, {kind}", size, r), flush=True)
    finally:
        shutil.rmtree(src, ignore_errors=True)
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--dir", default="/tmp/dflash2-bench-convert")
    ap.add_argument("--sizes", default="0.5,2,4,8")
    ap.add_argument("--kinds", default="dense,w4a16")
    ap.add_argument("--caches", default="hot,cold")
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--json", help="write every run here")
    args = ap.parse_args()
    work = Path(args.dir)
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    os.environ["PYTHONPATH"] = str(ROOT)
    print(
        "baseline: cp -r SRC DST && sync; candidate: python -m dflash2_ckpt convert SRC -o DST --to flat "
        "--verifier-name bench/target --verifier-arch Qwen3ForCausalLM"
    )
    print(_paired.HEADER, flush=True)
    rows = []
    try:
        for kind in args.kinds.split(","):
            for s in args.sizes.split(","):
                rows += run_size(work, float(s), kind, args.caches.split(","), args.repeat)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
