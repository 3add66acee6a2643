#!/usr/bin/env python3
"""DF751 across output lengths: τ of the trained drafter and of each silent failure at several
--max-new-tokens, on the bundled pairs' own prompts (the target's prompts.jsonl, as the CLI uses them).

    PYTHONPATH=. python bench/accept_lengths.py [--pairs tiny,recall] [--lengths 32,64,128,256]
                                                [--variants trained,random-fc,v2-as-v1,taps+1,taps-1] [--seed 7]
                                                [--markdown]

Per row: τ over the whole output, τ over the first 32 new tokens of every output (what DF751 judges,
accept/checks.py OPENING_TOKENS) and whether DF751 was raised. The failures are bench/accept_failures.py's
(random fc: noise from torch.Generator().manual_seed(--seed) at fc.weight's scale).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from accept_failures import TARGETS, VARIANTS  # noqa: E402

from dflash2_ckpt.accept import accept  # noqa: E402
from dflash2_ckpt.smoke.drafting import load_drafter  # noqa: E402


def measure(pairs: list[str], lengths: list[int], variants: list[str], seed: int) -> list[dict[str, Any]]:
    breaks = {name: f for name, _, f in VARIANTS}
    rows = []
    for name in pairs:
        pair = ROOT / "fixtures" / "pairs" / name
        base = load_drafter(pair / "drafter", target=pair / "target", device="cpu")
        for v in variants:
            target: Any = TARGETS[v](pair, base) if v in TARGETS else pair / "target"
            for n in lengths:
                r = accept(breaks[v](base, seed), target, max_new_tokens=n, device="cpu")
                assert r.tau_opening is not None
                rows.append(
                    {
                        "pair": name,
                        "variant": v,
                        "max_new_tokens": n,
                        "tau": round(r.tau.mean, 3),
                        "tau_opening": round(r.tau_opening.mean, 3),
                        "df751": any(f.code == "DF751" for f in r.findings),
                        "lossless": all(p.lossless for p in r.prompts),
                    }
                )
                print(json.dumps(rows[-1]), file=sys.stderr, flush=True)
    return rows


def markdown(rows: list[dict[str, Any]]) -> str:
    out = [
        "| pair | variant | new tokens | τ | τ, first 32 tokens of every output | DF751 | lossless |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        out.append(
            f"| {r['pair']} | {r['variant']} | {r['max_new_tokens']} | {r['tau']:.2f} | {r['tau_opening']:.2f} "
            f"| {'raised' if r['df751'] else '-'} | {'yes' if r['lossless'] else 'NO'} |"
        )
    return "\n".join(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--pairs", default="tiny,recall")
    ap.add_argument("--lengths", default="32,64,128,256")
    ap.add_argument("--variants", default="trained,random-fc,v2-as-v1,taps+1,taps-1")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--markdown", action="store_true")
    args = ap.parse_args()
    torch.set_num_threads(1)
    rows = measure(
        args.pairs.split(","), [int(x) for x in args.lengths.split(",")], args.variants.split(","), args.seed
    )
    print(markdown(rows) if args.markdown else json.dumps(rows, indent=2))


if __name__ == "__main__":
    main()
