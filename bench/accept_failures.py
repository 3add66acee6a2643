#!/usr/bin/env python3
"""What each silent failure costs in acceptance, over many seeds, on the recall pair.

    PYTHONPATH=. python bench/accept_failures.py [--pair fixtures/pairs/recall] [--seeds 16] [--prompts 2]
                                                 [--max-new-tokens 32] [--markdown]

Each variant loads the trained drafter once and breaks one thing the way an engine or converter does
silently (ENGINES.md §1-2, CONTRACT §4, §6), then runs the same accept loop (greedy verification,
lossless). Seed s draws fresh prompts (random prefixes of the pair's language, recall.json) and, for
random-fc, the noise generator torch.Generator().manual_seed(s). Per variant the table gives τ's
min / median / max over the seeds; DF751's threshold (accept/checks.py NOT_DRAFTING) must lie between
the worst trained seed and the best broken one.
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any, Callable

import numpy as np
import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from dflash2_ckpt.accept import accept  # noqa: E402
from dflash2_ckpt.smoke.drafting import Drafter, load_drafter  # noqa: E402


def _random_fc(d: Drafter, seed: int) -> Drafter:
    fc = d.params["fc.weight"]
    noise = torch.randn(fc.shape, generator=torch.Generator().manual_seed(seed)).to(fc.device) * float(fc.std())
    return d.replace(params={**d.params, "fc.weight": noise})


def _v2_as_v1(d: Drafter, seed: int) -> Drafter:
    return d.replace(spec=dataclasses.replace(d.spec, version="v1"))   # no conv, per-slot argmax


def _taps(delta: int) -> Callable[[Drafter, int], Drafter]:
    def shift(d: Drafter, seed: int) -> Drafter:
        return d.replace(spec=dataclasses.replace(d.spec, target_layer_ids=tuple(t + delta for t in d.spec.target_layer_ids)))
    return shift


def _causal(d: Drafter, seed: int) -> Drafter:
    return d.replace(causal_override=(True,) * d.spec.num_hidden_layers)


def _codebooks_zero(d: Drafter, seed: int) -> Drafter:
    p = dict(d.params)
    for k in ("candidate_selector.predecessor_codebook", "candidate_selector.successor_codebook"):
        p[k] = torch.zeros_like(p[k])
    return d.replace(params=p)


VARIANTS: list[tuple[str, str, Callable[[Drafter, int], Drafter]]] = [
    ("trained", "the drafter as trained", lambda d, s: d),
    ("random-fc", "fc.weight replaced by random values of the same scale (SGLang W4A16 fc dropped)", _random_fc),
    ("v2-as-v1", "conv and selector dropped: v2 weights read by a v1 loader", _v2_as_v1),
    ("taps+1", "target_layer_ids shifted by +1 (hidden_states[id + 2])", _taps(1)),
    ("causal", "causal attention in the block where it was trained bidirectional", _causal),
    ("codebooks-zero", "selector codebooks zeroed (walk = independent per-slot argmax)", _codebooks_zero),
]


def seed_prompts(pair: Path, seed: int, n: int, out: Path) -> Path:
    """n fresh prompts of the recall language (the pair builder's own prompt form), drawn from seed."""
    sys.path.insert(0, str(ROOT / "fixtures"))
    from build_recall_pair import recall_prompt
    words = json.loads((pair / "recall.json").read_text())["words"]
    rng = np.random.default_rng(1000 + seed)
    rows = [{"prompt": recall_prompt(rng, words)} for _ in range(n)]
    out.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    return out


def measure(pair: Path, seeds: int, n_prompts: int, max_new: int, device: str | None = None,
            variants: list[str] | None = None) -> list[dict[str, Any]]:
    base = load_drafter(pair / "drafter", target=pair / "target", device=device)
    chosen = [v for v in VARIANTS if variants is None or v[0] in variants]
    taus: dict[str, list[float]] = {name: [] for name, _, _ in chosen}
    lossless: dict[str, bool] = {name: True for name, _, _ in chosen}
    with tempfile.TemporaryDirectory() as tmp:
        for s in range(seeds):
            prompts = seed_prompts(pair, s, n_prompts, Path(tmp) / f"seed{s}.jsonl")
            for name, _, breaks in chosen:
                r = accept(breaks(base, s), pair / "target", prompts=prompts, max_new_tokens=max_new, device=device)
                taus[name].append(r.tau.mean)
                lossless[name] = lossless[name] and all(p.lossless for p in r.prompts)
    rows = []
    for name, what, _ in chosen:
        t = taus[name]
        if not t:
            rows.append({"variant": name, "what": what, "seeds": 0})
            continue
        rows.append({"variant": name, "what": what, "seeds": len(t), "min": round(min(t), 3),
                     "median": round(statistics.median(t), 3), "max": round(max(t), 3),
                     "lossless": lossless[name], "taus": [round(x, 3) for x in t]})
    return rows


def markdown(rows: list[dict[str, Any]]) -> str:
    out = ["| variant | what breaks | seeds | τ min | τ median | τ max | lossless |", "|---|---|---|---|---|---|---|"]
    for r in rows:
        if not r["seeds"]:
            out.append(f"| {r['variant']} | {r['what']} | 0 | - | - | - | - |")
            continue
        out.append(f"| {r['variant']} | {r['what']} | {r['seeds']} | {r['min']:.2f} | {r['median']:.2f} | "
                   f"{r['max']:.2f} | {'yes' if r['lossless'] else 'NO'} |")
    return "\n".join(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--pair", type=Path, default=ROOT / "fixtures" / "pairs" / "recall")
    ap.add_argument("--seeds", type=int, default=16)
    ap.add_argument("--prompts", type=int, default=2)
    ap.add_argument("--max-new-tokens", type=int, default=32)
    ap.add_argument("--device", default=None)
    ap.add_argument("--variants", default=None, help="comma-separated subset")
    ap.add_argument("--markdown", action="store_true")
    args = ap.parse_args()
    torch.set_num_threads(1)
    rows = measure(args.pair, args.seeds, args.prompts, args.max_new_tokens, args.device,
                   args.variants.split(",") if args.variants else None)
    print(markdown(rows) if args.markdown else json.dumps(rows, indent=2))


if __name__ == "__main__":
    main()
