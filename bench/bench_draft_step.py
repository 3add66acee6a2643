#!/usr/bin/env python3
"""One drafting step against the context length: the kept context (accept's loop) vs recomputing it (the loop
before KeptContext), in one process, one torch thread.

    PYTHONPATH=. python bench/bench_draft_step.py [--pair fixtures/pairs/tiny] [--contexts 64,256,1024,4096]
                                                  [--steps 50] [--accepted 3]

A step is what accept's loop does per verification: draft one block from the context, then append the taps
of the `--accepted` + 1 committed tokens. The taps are random of the target's width (the cost does not depend
on their values). Kept: `Drafter.keep_context` / `draft(kept=...)` / `extend`; recomputed:
`draft(hidden_states=<whole context>)`. Per context length: the median ms per step of each and their ratio;
a linear loop's step stays flat as the context grows, a recomputing one grows with it.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from dflash2_ckpt.smoke.drafting import load_drafter  # noqa: E402


def step_times(pair: Path, n_ctx: int, steps: int, accepted: int) -> dict[str, float]:
    d = load_drafter(pair / "drafter", target=pair / "target")
    width = d.spec.fc_in_features
    gen = torch.Generator().manual_seed(n_ctx)
    taps = torch.randn(n_ctx + steps * (accepted + 1), width, generator=gen)
    anchor = torch.tensor([1])
    kept = d.keep_context()
    kept.extend(taps[:n_ctx])
    t_kept, t_full = [], []
    n = n_ctx
    for _ in range(steps):
        t0 = time.perf_counter()
        d.draft(None, anchor, kept=kept)
        kept.extend(taps[n : n + accepted + 1])
        t_kept.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        d.draft(taps[:n], anchor)
        t_full.append(time.perf_counter() - t0)
        n += accepted + 1
    k, f = statistics.median(t_kept) * 1e3, statistics.median(t_full) * 1e3
    return {
        "context": n_ctx,
        "kept_ms": round(k, 3),
        "recomputed_ms": round(f, 3),
        "recomputed/kept": round(f / k, 2),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pair", type=Path, default=ROOT / "fixtures" / "pairs" / "tiny")
    ap.add_argument("--contexts", default="64,256,1024,4096")
    ap.add_argument("--steps", type=int, default=50)
    ap.add_argument(
        "--accepted", type=int, default=3, help="accepted drafts per step (the taps appended: + 1)"
    )
    args = ap.parse_args()
    torch.set_num_threads(1)
    with torch.no_grad():
        for n in (int(x) for x in args.contexts.split(",")):
            print(json.dumps(step_times(args.pair, n, args.steps, args.accepted)), flush=True)


if __name__ == "__main__":
    main()
