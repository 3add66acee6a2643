"""`accept --engine vllm` in vLLM 0.32.0's CPU build: τ from vLLM's own spec-decode counters where it can
draft (DFlash v1 at a head_dim its CPU attention has), and its own words where it refuses."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from _kit import extras
from _kit.cli import run

from . import pair
from .cases import PAIR


def _accept(drafter: Path, target: Path, python: Path, *more: str) -> tuple[int, dict]:
    code, out, _ = run(
        "accept",
        str(drafter),
        "--target",
        str(target),
        "--engine",
        "vllm",
        "--vllm-python",
        str(python),
        "--max-new-tokens",
        "16",
        "--limit",
        "2",
        "--format",
        "json",
        *more,
    )
    return code, json.loads(out)


@extras.needs("accept")  # the reference loop it is compared with runs here, in torch and triton
def test_dflash_v1_drafts_in_vllm_counted_by_vllm_and_lossless(vllm_python: Path, tmp_path: Path) -> None:
    p = pair.build(tmp_path)
    code, doc = _accept(p["drafter"], p["target"], vllm_python)
    d = doc["engine_details"]
    assert doc["engine"] == "vllm" and doc["build"] == "vllm 0.32.0" and d["num_speculative_tokens"] == 7
    # vLLM drafted 7 tokens per step, every step; untrained weights: none accepted, τ 1 (DF751, exit 1)
    assert d["drafts"] > 0 and d["draft_n"] == 7 * d["drafts"] and d["draft_n_accepted"] == 0
    assert doc["tau"]["mean"] == 1.0 and code == 1 and "DF751" in {f["code"] for f in doc["findings"]}
    # greedy verification kept vLLM's own text without the drafter, and the reference loop agrees
    assert all(pr["lossless"] for pr in doc["prompts"])
    assert d["parity"]["tau_engine"] == d["parity"]["tau_reference"] == 1.0


@pytest.mark.parametrize(
    "drafter,said",
    [
        ("drafter", "Model Runner V1 does not support: DFlash candidate-head drafts"),
        ("drafter-v1", "Unsupported CPU attention configuration: head_dim=16"),
    ],
)
def test_what_vllm_refuses_is_exit_2_in_its_words(vllm_python: Path, drafter: str, said: str) -> None:
    code, doc = _accept(PAIR / drafter, PAIR / "target", vllm_python)
    assert code == 2 and doc["error"]["type"] == "UsageError", doc
    assert (
        doc["error"]["message"].startswith("vLLM 0.32.0 refuses to run it: ")
        and said in doc["error"]["message"]
    )
