#!/usr/bin/env python3
"""What each silent failure costs in acceptance, measured on the bundled tiny trained pair.

    PYTHONPATH=. python bench/accept_failures.py [--pair fixtures/pairs/tiny] [--max-new-tokens 48] [--markdown]

Each row loads the trained drafter once and breaks one thing the way an engine or converter does
silently (ENGINES.md §1-2, CONTRACT §4, §6), then runs the same accept loop (greedy verification,
lossless) on the same prompts.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, Callable

import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from dflash2_ckpt.accept import accept  # noqa: E402
from dflash2_ckpt.smoke.drafting import Drafter, load_drafter  # noqa: E402


def _random_fc(d: Drafter) -> Drafter:
    fc = d.params["fc.weight"]
    gen = torch.Generator().manual_seed(0)
    noise = torch.randn(fc.shape, generator=gen).to(fc.device) * float(fc.std())
    return d.replace(params={**d.params, "fc.weight": noise})


def _v2_as_v1(d: Drafter) -> Drafter:
    import dataclasses
    return d.replace(spec=dataclasses.replace(d.spec, version="v1"))   # no conv, per-slot argmax


def _taps_shifted(d: Drafter) -> Drafter:
    import dataclasses
    return d.replace(spec=dataclasses.replace(d.spec, target_layer_ids=tuple(t + 1 for t in d.spec.target_layer_ids)))


def _causal(d: Drafter) -> Drafter:
    return d.replace(causal_override=(True,) * d.spec.num_hidden_layers)


def _codebooks_zero(d: Drafter) -> Drafter:
    p = dict(d.params)
    for k in ("candidate_selector.predecessor_codebook", "candidate_selector.successor_codebook"):
        p[k] = torch.zeros_like(p[k])
    return d.replace(params=p)


VARIANTS: list[tuple[str, str, Callable[[Drafter], Drafter]]] = [
    ("trained", "the drafter as trained", lambda d: d),
    ("random-fc", "fc.weight replaced by random values of the same scale (SGLang W4A16 fc dropped)", _random_fc),
    ("v2-as-v1", "conv and selector dropped: v2 weights read by a v1 loader", _v2_as_v1),
    ("taps+1", "target_layer_ids shifted by one (hidden_states[id + 2])", _taps_shifted),
    ("causal", "causal attention in the block where it was trained bidirectional", _causal),
    ("codebooks-zero", "selector codebooks zeroed (walk = independent per-slot argmax)", _codebooks_zero),
]


def measure(pair: Path, max_new: int, device: str | None = None) -> list[dict[str, Any]]:
    base = load_drafter(pair / "drafter", target=pair / "target", device=device)
    rows = []
    for name, what, breaks in VARIANTS:
        r = accept(breaks(base), pair / "target", max_new_tokens=max_new, device=device)
        rows.append({"variant": name, "what": what, "tau": r.tau.to_json(), "acceptance_rate": round(r.acceptance_rate, 4),
                     "lossless": all(p.lossless for p in r.prompts),
                     "codes": sorted({f.code for f in r.findings if f.severity != "info"})})
    return rows


def markdown(rows: list[dict[str, Any]], block: int = 8) -> str:
    out = ["| variant | what breaks | τ (95% CI) | acceptance rate | Δτ | lossless | findings |",
           "|---|---|---|---|---|---|---|"]
    t0 = rows[0]["tau"]["mean"]
    for r in rows:
        t = r["tau"]
        out.append(f"| {r['variant']} | {r['what']} | {t['mean']:.2f} ({t['ci95'][0]:.2f}-{t['ci95'][1]:.2f}) | "
                   f"{r['acceptance_rate']:.3f} | {t['mean'] - t0:+.2f} | {'yes' if r['lossless'] else 'NO'} | "
                   f"{', '.join(r['codes']) or '-'} |")
    return "\n".join(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--pair", type=Path, default=ROOT / "fixtures" / "pairs" / "tiny")
    ap.add_argument("--max-new-tokens", type=int, default=48)
    ap.add_argument("--device", default=None)
    ap.add_argument("--markdown", action="store_true")
    args = ap.parse_args()
    rows = measure(args.pair, args.max_new_tokens, args.device)
    print(markdown(rows) if args.markdown else json.dumps(rows, indent=2))


if __name__ == "__main__":
    main()
