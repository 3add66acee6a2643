#!/usr/bin/env python3
"""accept on a CUDA device, and drafting throughput on the 27B drafter's shapes (needs a GPU).

    PYTHONPATH=. python bench/gpu_accept.py [--pair fixtures/pairs/tiny] [--context 512] [--batches 1,8,32]
    # dry run of the code paths on a CPU (interpreted Triton, tiny geometry; the timings mean nothing):
    TRITON_INTERPRET=1 PYTHONPATH=. python bench/gpu_accept.py --device cpu --config fixtures/good/nested-v2/config.json \
        --context 12 --batches 1,2 --reps 1 --max-new-tokens 8

1. The bundled tiny pair on CUDA (target bf16, drafter Triton conv + walk): tau, losslessness, speed,
   against the same run with the torch kernels.
2. Drafting throughput with random weights on the published Qwen3.8-27B-DFlash2 geometry (H 5120,
   5 layers, V 248,320, K 16, R 256, B 8): whole draft (forward + candidates + selector + walk) and the
   walk and the conv alone, Triton vs torch, at batch 1 / 8 / 32.
Prints one JSON document.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import torch  # noqa: E402

REAL = ROOT / "fixtures" / "real" / "z-lab_Qwen3.8-27B-DFlash2.config.json"


def _sync() -> None:
    if torch.cuda.is_available():
        torch.cuda.synchronize()


def timed(fn: Callable[[], Any], reps: int = 10) -> float:
    fn()
    _sync()
    t0 = time.perf_counter()
    for _ in range(reps):
        fn()
    _sync()
    return (time.perf_counter() - t0) / reps


def pair_on_device(pair: Path, max_new: int, device: str = "cuda") -> dict[str, Any]:
    from dflash2_ckpt.accept import accept

    out = {}
    for kernels in ("triton", "torch"):
        r = accept(pair / "drafter", pair / "target", max_new_tokens=max_new, device=device, kernels=kernels)
        out[kernels] = {
            "tau": r.tau.to_json(),
            "lossless": all(p.lossless for p in r.prompts),
            "tokens_per_s": round(r.tokens_per_s, 1),
            "baseline_tokens_per_s": round(r.baseline_tokens_per_s, 1),
            "codes": sorted({f.code for f in r.findings}),
        }
    return out


def big_drafter(dev: torch.device, config: Path) -> Any:
    from dflash2_ckpt.formats.parse import to_spec
    from dflash2_ckpt.smoke.drafting import Drafter
    from dflash2_ckpt.smoke.weights import parameter_shapes

    spec, errors = to_spec(json.loads(config.read_text()))
    assert spec is not None, errors
    gen = torch.Generator(device=dev.type).manual_seed(0)
    params = {}
    for name, shape in parameter_shapes(spec).items():
        if name.endswith("norm.weight"):
            params[name] = torch.ones(shape, device=dev)
        elif name.endswith("base_kernel"):
            t = 0.1 * torch.randn(shape, generator=gen, device=dev)
            t[:, 0] += 1.0
            params[name] = t
        else:
            params[name] = torch.randn(shape, generator=gen, device=dev) * shape[-1] ** -0.5
    v, h = spec.vocab_size, spec.hidden_size
    embed = torch.randn(v, h, generator=gen, device=dev)
    head = torch.randn(v, h, generator=gen, device=dev) * h**-0.5
    return Drafter(
        spec, params, embed, head, spec.block_size or 8, spec.mask_token_id or v - 1, dev, "triton"
    )


def throughput(
    context: int, batches: list[int], config: Path = REAL, device: str = "cuda", reps: int = 10
) -> list[dict[str, Any]]:
    from dflash2_ckpt.smoke.conv import grouped_dynamic_conv
    from dflash2_ckpt.smoke.device import prepare_triton
    from dflash2_ckpt.smoke.triton_conv import triton_grouped_dynamic_conv
    from dflash2_ckpt.smoke.triton_walk import triton_walk
    from dflash2_ckpt.smoke.walk import walk

    dev = torch.device(device)
    prepare_triton(dev)
    d = big_drafter(dev, config)
    s, p = d.spec, d.params
    rows = []
    for q in batches:
        hidden = torch.randn(q, context, s.fc_in_features, device=dev)
        anchors = torch.randint(0, s.vocab_size, (q,), device=dev)
        r = d.draft(hidden, anchors)
        assert r.edge_scores is not None and r.selector_projection is not None
        ids, u, z, scores = r.candidates, r.unary, r.selector_projection, r.edge_scores
        a_cb, b_cb = p["candidate_selector.predecessor_codebook"], p["candidate_selector.successor_codebook"]
        rows_m, b = q * d.block_size, d.block_size
        y = torch.randn(rows_m, s.hidden_size, device=dev)
        base, proj = p["layers.0.mlp_conv.base_kernel"], p["layers.0.mlp_conv.kernel_projection.weight"]
        row = {
            "batch": q,
            "context": context,
            "draft_triton_ms": timed(lambda: d.draft(hidden, anchors), reps) * 1e3,
            "draft_torch_ms": timed(lambda: d.replace(kernels="torch").draft(hidden, anchors), reps) * 1e3,
            "walk_triton_ms": timed(lambda: triton_walk(u, ids, z, a_cb, b_cb, anchors), reps) * 1e3,
            "walk_torch_ms": timed(lambda: walk(scores, ids), reps) * 1e3,
            "conv_triton_ms": timed(lambda: triton_grouped_dynamic_conv(y, y, base, proj, 0, b), reps) * 1e3,
            "conv_torch_ms": timed(lambda: grouped_dynamic_conv(y, y, base, proj, 0, b), reps) * 1e3,
        }
        row["drafted_tokens_per_s_triton"] = q * (b - 1) / (row["draft_triton_ms"] / 1e3)
        rows.append({k: round(v, 3) if isinstance(v, float) else v for k, v in row.items()})
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--pair", type=Path, default=ROOT / "fixtures" / "pairs" / "tiny")
    ap.add_argument("--max-new-tokens", type=int, default=48)
    ap.add_argument("--context", type=int, default=512)
    ap.add_argument("--batches", default="1,8,32")
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--config", type=Path, default=REAL, help="drafter geometry (default: the 27B drafter's)")
    ap.add_argument(
        "--device",
        default="cuda",
        help="cpu only to dry-run the script (Triton interpreted; give a tiny --config)",
    )
    args = ap.parse_args()
    if args.device.startswith("cuda") and not torch.cuda.is_available():
        sys.exit("bench/gpu_accept.py needs a CUDA device")
    doc = {
        "device": torch.cuda.get_device_name(0) if args.device.startswith("cuda") else args.device,
        "torch": torch.__version__,
        "tiny_pair": pair_on_device(args.pair, args.max_new_tokens, args.device),
        "throughput": throughput(
            args.context, [int(b) for b in args.batches.split(",")], args.config, args.device, args.reps
        ),
    }
    print(json.dumps(doc, indent=2))


if __name__ == "__main__":
    main()
