"""The recall pair separates every silent failure from the trained drafter, seed after seed.

The pair speaks two languages (fixtures/build_recall_pair.py). Recall of a random prefix: a drafter knows
the continuation only through the target's hidden states, so a random fc, v2 weights read as v1 and
taps shifted by one each cost τ whatever the prompts. A second-order rule: its greedy continuation is a
chain the drafter computes slot after slot, and a drafter trained bidirectionally loses τ there under a
causal mask. Seed s draws one recall and three rule prompts (and the fc noise); bench/accept_failures.py
runs the same over 16 seeds (bench/RESULTS.md).
"""

from __future__ import annotations

from pathlib import Path

import pytest

import dflash2_ckpt
from _kit.bench import load
from dflash2_ckpt.accept.checks import NOT_DRAFTING
from dflash2_ckpt.smoke.drafting import load_drafter

ROOT = Path(__file__).resolve().parents[2]
PAIR = ROOT / "fixtures" / "pairs" / "recall"
SEEDS = range(16)
pytestmark = pytest.mark.skipif(
    not (PAIR / "drafter" / "model.safetensors").is_file(), reason="recall pair not built"
)


BENCH = load("accept_failures")


@pytest.fixture(scope="module")
def drafter():
    return load_drafter(PAIR / "drafter", target=PAIR / "target", device="cpu")


def _tau(d, prompts, target=PAIR / "target") -> float:
    return dflash2_ckpt.accept(d, target, prompts=prompts, max_new_tokens=32, device="cpu").tau.mean


@pytest.fixture(scope="module")
def prompts(tmp_path_factory):
    root = tmp_path_factory.mktemp("recall-prompts")
    return {s: BENCH.seed_prompts(PAIR, s, 1, root / f"{s}.jsonl", 3) for s in SEEDS}


@pytest.fixture(scope="module")
def trained(drafter, prompts):
    return {s: _tau(drafter, prompts[s]) for s in SEEDS}


def test_trained_drafter_drafts_on_every_seed(trained):
    assert min(trained.values()) >= 4.0, trained


def test_random_fc_never_drafts_whatever_the_seed(drafter, prompts, trained):
    taus = {s: _tau(BENCH._random_fc(drafter, s), prompts[s]) for s in SEEDS}
    assert max(taus.values()) < NOT_DRAFTING < min(trained.values()), taus


# each variant's cost on the trained drafter's own seeds: at least the margin named here (the bench's
# 16 seeds measured more, bench/RESULTS.md)
COST = {"v2-as-v1": 1.0, "taps+1": 1.0, "taps-1": 1.0, "causal": 0.25}


@pytest.mark.parametrize("variant", sorted(COST))
def test_each_silent_failure_costs_tau_on_every_seed(variant, drafter, prompts, trained):
    [breaks] = [f for name, _, f in BENCH.VARIANTS if name == variant]
    broken = breaks(drafter, 0)
    target = BENCH.TARGETS[variant](PAIR, drafter) if variant in BENCH.TARGETS else PAIR / "target"
    seeds = list(SEEDS)[:4]  # the bench covers 16; four keep the suite short
    taus = {s: _tau(broken, prompts[s], target) for s in seeds}
    assert all(taus[s] <= trained[s] - COST[variant] for s in seeds), (taus, trained)
