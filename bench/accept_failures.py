#!/usr/bin/env python3
"""What each silent failure costs in acceptance, over many seeds, on the recall pair.

    PYTHONPATH=. python bench/accept_failures.py [--pair fixtures/pairs/recall] [--seeds 16] [--prompts 2]
                                                 [--rule-prompts N] [--max-new-tokens 32] [--markdown]

Each variant loads the trained drafter once and breaks one thing the way an engine or converter does
silently (docs/engines.md: engines, quantized drafters; docs/contract.md#in-block-causality,
#telling-drafters-apart), then runs the same accept loop (greedy verification,
lossless). Seed s draws fresh prompts, --prompts of the recall language (random prefixes,
recall.json "words") and --rule-prompts of the rule language (recall.json "rule_words", when the pair
has one), and, for random-fc, the noise generator torch.Generator().manual_seed(s). Per variant the
table gives τ's min / median / max over the seeds, and the cost seed by seed (the trained drafter's τ
minus the variant's on the same prompts) with its min / median / max; "separated" says whether the
trained drafter's worst seed beats the variant's best. DF751's threshold (accept/checks.py
NOT_DRAFTING) must lie between the worst trained seed and the best broken one.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import statistics
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from dflash2_ckpt.accept import accept  # noqa: E402
from dflash2_ckpt.accept.target import Target, load_target  # noqa: E402
from dflash2_ckpt.smoke.drafting import Drafter, load_drafter  # noqa: E402


def _random_fc(d: Drafter, seed: int) -> Drafter:
    fc = d.params["fc.weight"]
    noise = torch.randn(fc.shape, generator=torch.Generator().manual_seed(seed)).to(fc.device) * float(
        fc.std()
    )
    return d.replace(params={**d.params, "fc.weight": noise})


def _v2_as_v1(d: Drafter, seed: int) -> Drafter:
    return d.replace(spec=dataclasses.replace(d.spec, version="v1"))  # no conv, per-slot argmax


def _taps_up(d: Drafter, seed: int) -> Drafter:
    return d.replace(
        spec=dataclasses.replace(d.spec, target_layer_ids=tuple(t + 1 for t in d.spec.target_layer_ids))
    )


def _taps_down_target(pair: Path, d: Drafter) -> Target:
    """The target an engine that taps hidden_states[id] (one too early) gives the drafter: tap 0 becomes the
    embedding output, which no target_layer_ids value can name, so the shift is made on the loaded target
    (Target.forward reads hidden_states[t + 1] for each t in its taps)."""
    target = load_target(pair / "target", d.spec.target_layer_ids, d.device)
    target.taps = [t - 1 for t in target.taps]
    return target


def _causal(d: Drafter, seed: int) -> Drafter:
    return d.replace(causal_override=(True,) * d.spec.num_hidden_layers)


def _codebooks_zero(d: Drafter, seed: int) -> Drafter:
    p = dict(d.params)
    for k in ("candidate_selector.predecessor_codebook", "candidate_selector.successor_codebook"):
        p[k] = torch.zeros_like(p[k])
    return d.replace(params=p)


VARIANTS: list[tuple[str, str, Callable[[Drafter, int], Drafter]]] = [
    ("trained", "the drafter as trained", lambda d, s: d),
    (
        "random-fc",
        "fc.weight replaced by random values of the same scale (SGLang W4A16 fc dropped)",
        _random_fc,
    ),
    ("v2-as-v1", "conv and selector dropped: v2 weights read by a v1 loader", _v2_as_v1),
    ("taps+1", "target_layer_ids shifted by +1 (hidden_states[id + 2])", _taps_up),
    (
        "taps-1",
        "taps read one layer early (hidden_states[id]: tap 0 is the embedding output)",
        lambda d, s: d,
    ),
    ("causal", "causal attention in the block where it was trained bidirectional", _causal),
    ("codebooks-zero", "selector codebooks zeroed (walk = independent per-slot argmax)", _codebooks_zero),
]
# variants whose break is in what the target hands the drafter, not in the drafter
TARGETS: dict[str, Callable[[Path, Drafter], Target]] = {"taps-1": _taps_down_target}


def seed_prompts(pair: Path, seed: int, n: int, out: Path, n_rule: int | None = None) -> Path:
    """n fresh prompts of the recall language and n_rule (default n) of the rule language, when the pair
    has one (recall.json "rule_words"), drawn from seed with the pair builder's own prompt forms."""
    sys.path.insert(0, str(ROOT / "fixtures"))
    from build_recall_pair import recall_prompt, rule_prompt

    lang = json.loads((pair / "recall.json").read_text())
    rng = np.random.default_rng(1000 + seed)
    rows = [{"prompt": recall_prompt(rng, lang["words"])} for _ in range(n)]
    if "rule_words" in lang:
        rows += [
            {"prompt": rule_prompt(rng, lang["rule_words"])} for _ in range(n if n_rule is None else n_rule)
        ]
    out.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    return out


def measure(
    pair: Path,
    seeds: int,
    n_prompts: int,
    max_new: int,
    device: str | None = None,
    variants: list[str] | None = None,
    n_rule: int | None = None,
) -> list[dict[str, Any]]:
    base = load_drafter(pair / "drafter", target=pair / "target", device=device)
    chosen = [v for v in VARIANTS if variants is None or v[0] in variants]
    targets: dict[str, Any] = {
        name: TARGETS[name](pair, base) if name in TARGETS else pair / "target" for name, _, _ in chosen
    }
    taus: dict[str, list[float]] = {name: [] for name, _, _ in chosen}
    lossless: dict[str, bool] = {name: True for name, _, _ in chosen}
    with tempfile.TemporaryDirectory() as tmp:
        for s in range(seeds):
            prompts = seed_prompts(pair, s, n_prompts, Path(tmp) / f"seed{s}.jsonl", n_rule)
            for name, _, breaks in chosen:
                r = accept(
                    breaks(base, s), targets[name], prompts=prompts, max_new_tokens=max_new, device=device
                )
                taus[name].append(r.tau.mean)
                lossless[name] = lossless[name] and all(p.lossless for p in r.prompts)
    trained = taus.get("trained")
    rows = []
    for name, what, _ in chosen:
        t = taus[name]
        if not t:
            rows.append({"variant": name, "what": what, "seeds": 0})
            continue
        row = {
            "variant": name,
            "what": what,
            "seeds": len(t),
            "min": round(min(t), 3),
            "median": round(statistics.median(t), 3),
            "max": round(max(t), 3),
            "lossless": lossless[name],
            "taus": [round(x, 3) for x in t],
        }
        if trained is not None and name != "trained":
            # the same seed's prompts (and fc noise) under both: what the break costs seed by seed
            cost = [a - b for a, b in zip(trained, t)]
            row["cost"] = {
                "min": round(min(cost), 3),
                "median": round(statistics.median(cost), 3),
                "max": round(max(cost), 3),
            }
            row["separated"] = min(trained) > max(t)
        rows.append(row)
    return rows


def markdown(rows: list[dict[str, Any]]) -> str:
    out = [
        "| variant | what breaks | seeds | τ min | τ median | τ max "
        "| cost per seed (trained − variant) min / median / max | trained min > τ max | lossless |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        if not r["seeds"]:
            out.append(f"| {r['variant']} | {r['what']} | 0 | - | - | - | - | - | - |")
            continue
        c = r.get("cost")
        cost = f"{c['min']:.2f} / {c['median']:.2f} / {c['max']:.2f}" if c else "-"
        sep = ("yes" if r["separated"] else "no") if "separated" in r else "-"
        out.append(
            f"| {r['variant']} | {r['what']} | {r['seeds']} | {r['min']:.2f} | {r['median']:.2f} | "
            f"{r['max']:.2f} | {cost} | {sep} | {'yes' if r['lossless'] else 'NO'} |"
        )
    return "\n".join(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--pair", type=Path, default=ROOT / "fixtures" / "pairs" / "recall")
    ap.add_argument("--seeds", type=int, default=16)
    ap.add_argument("--prompts", type=int, default=2, help="recall prompts per seed")
    ap.add_argument(
        "--rule-prompts", type=int, default=None, help="rule prompts per seed (default: --prompts)"
    )
    ap.add_argument("--max-new-tokens", type=int, default=32)
    ap.add_argument("--device", default=None)
    ap.add_argument("--variants", default=None, help="comma-separated subset")
    ap.add_argument("--markdown", action="store_true")
    args = ap.parse_args()
    torch.set_num_threads(1)
    rows = measure(
        args.pair,
        args.seeds,
        args.prompts,
        args.max_new_tokens,
        args.device,
        args.variants.split(",") if args.variants else None,
        args.rule_prompts,
    )
    print(markdown(rows) if args.markdown else json.dumps(rows, indent=2))


if __name__ == "__main__":
    main()
