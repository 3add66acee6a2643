"""accept --engine transformers: transformers' own DFlash assisted generation on the tiny v1 pair, against
the reference loop on the same target and prompts; drafters transformers cannot run are refused with why.

Measured on the tiny v1 pair (fixtures/build_v1_pair.py), 8 prompts x 40 new tokens: transformers
tau 4.52; the reference loop 5.13 as it reports it, 4.52 counted as transformers counts (the last step of
a prompt cropped to max_new_tokens): ratio 1.00, the same number of verification steps per prompt and the
same accepted count in every step but each prompt's last. Here 3 prompts x 32 tokens; the stated
agreement: ratio within 0.95 ... 1.05 and equal steps.
"""

from __future__ import annotations

import importlib.util
import json
import os
from pathlib import Path

import pytest
import torch

from _kit.cli import invoke_cli
from dflash2_ckpt.accept.engine_transformers import StepCounter
from dflash2_ckpt.cli import main
from dflash2_ckpt.engines import released as r

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
PAIR = FIXTURES / "pairs" / "tiny"
V1, V2, TARGET = PAIR / "drafter-v1", PAIR / "drafter", PAIR / "target"
ARGS = [
    "--target",
    str(TARGET),
    "--engine",
    "transformers",
    "--max-new-tokens",
    "32",
    "--limit",
    "3",
    "--device",
    "cpu",
    "--format",
    "json",
]


@pytest.fixture(scope="module")
def run() -> dict:
    res = invoke_cli(main, ["accept", str(V1), *ARGS])
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout)


def test_transformers_agrees_with_the_reference_loop_on_the_v1_pair(run: dict) -> None:
    assert run["engine"] == "transformers" and run["build"].startswith("transformers 5.")
    assert run["passed"] and all(p["lossless"] for p in run["prompts"]) and len(run["prompts"]) == 3
    par = run["engine_details"]["parity"]
    assert 0.95 <= par["ratio"] <= 1.05, par
    assert par["tau_reference"] >= par["tau_reference_committed"]  # the loop counts its last step whole
    assert par["tau_engine"] == pytest.approx(run["tau"]["mean"], abs=1e-4) and par["tau_engine"] > 3.0
    # one verification step per target forward after the prefill, in both loops; the same accepted count in
    # each step but a prompt's last (transformers crops that one at max_new_tokens before counting)
    assert par["steps_engine"] == par["steps_reference"] == sum(p["steps"] for p in run["prompts"])
    assert par["steps_same_accepted"] >= par["steps_engine"] - len(run["prompts"])
    assert not [f for f in run["findings"] if f["code"] == "DF755"]


def test_the_count_is_the_tokens_transformers_committed(run: dict) -> None:
    """tau from the streamer's counts equals the generated tokens: every token but the prefill's comes from a
    verification step, so sum(a + 1) over the steps is the generated length minus one."""
    for p in run["prompts"]:
        assert sum(a + 1 for a in p["accepted_per_step"]) == p["generated"] - 1, p
        assert p["steps"] == len(p["accepted_per_step"]) and p["generated"] <= 32
    fw = run["target_forwards"]
    assert fw["speculative"] == sum(p["steps"] for p in run["prompts"]) + 3  # + one prefill each
    assert len(run["acceptance_per_position"]) == 7 and run["block_size"] == 8


def test_text_report_names_the_engine_and_the_parity() -> None:
    res = invoke_cli(main, ["accept", str(V1), *ARGS[:-2], "--limit", "1", "--max-new-tokens", "12"])
    assert res.exit_code == 0, res.output
    assert "engine transformers (build transformers 5." in res.output
    assert "speculation_type='dflash'" in res.output and "parity: tau_engine" in res.output


def test_dflash2_drafter_is_refused_with_what_transformers_lacks() -> None:
    res = invoke_cli(main, ["accept", str(V2), *ARGS])
    assert res.exit_code == 2, res.output
    err = json.loads(res.stdout)["error"]
    assert "DFlash2" in err["message"] and "no conv and no candidate selector" in err["message"]
    assert str(r.TF_NO_SELECTOR) in err["message"]  # cited to the released file
    assert err["path"] == str(V2)


def test_nested_v1_drafter_is_refused_naming_the_assistant_dialect() -> None:
    nested = FIXTURES / "good" / "nested-v1"
    if not (nested / "config.json").is_file():
        pytest.skip("no nested v1 fixture")
    res = invoke_cli(main, ["accept", str(nested), *ARGS])
    assert res.exit_code == 2, res.output
    assert "assistant export dialect" in json.loads(res.stdout)["error"]["message"]


def test_taps_the_target_lacks_are_a_clear_error(tmp_path: Path) -> None:
    import shutil

    bad = tmp_path / "drafter"
    shutil.copytree(V1, bad)
    cfg = json.loads((bad / "config.json").read_text())
    (bad / "config.json").write_text(json.dumps({**cfg, "target_layer_ids": [0, 9]}))
    res = invoke_cli(main, ["accept", str(bad), *ARGS])
    assert res.exit_code == 3, res.output
    err = json.loads(res.stdout)["error"]
    assert err["field"] == "target_layer_ids" and "4-layer target" in err["message"]


def test_reference_only_options_are_refused() -> None:
    res = invoke_cli(main, ["accept", str(V1), *ARGS, "--kernels", "torch"])
    assert res.exit_code == 2 and "do not apply to --engine transformers" in res.output


def test_step_counter_skips_the_prompt_and_the_prefill() -> None:
    c = StepCounter()
    for n in (5, 1, 4, 8, 2):  # prompt, prefill token, then three verification steps
        c.put(torch.zeros(1, n, dtype=torch.long) if n > 1 else torch.zeros(1, dtype=torch.long))
    c.end()
    assert c.accepted() == [3, 7, 1]


@pytest.mark.slow
@pytest.mark.skipif(not os.environ.get("DFLASH2_SLOW"), reason="trains for minutes; set DFLASH2_SLOW=1")
def test_v1_drafter_rebuilds_byte_identical(tmp_path: Path) -> None:
    spec = importlib.util.spec_from_file_location("build_v1_pair", FIXTURES / "build_v1_pair.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    mod.build(tmp_path / "v1", TARGET)
    for rel in ("model.safetensors", "config.json"):
        assert (tmp_path / "v1" / rel).read_bytes() == (V1 / rel).read_bytes(), rel
