"""`accept --engine llama.cpp` on the recall pair, in the real engine (llama.cpp b11434, CPU).

The target GGUF is made by llama.cpp's own convert_hf_to_gguf.py, the drafter GGUF by this toolkit's
converter; τ comes from llama-server's own draft counters.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from _kit.cli import invoke_cli
from dflash2_ckpt.cli.accept import accept_command

from .conftest import PAIR

OPTS = ["--max-new-tokens", "32", "--limit", "2", "--format", "json"]


def _run(args: list[str]) -> tuple[int, dict]:
    res = invoke_cli(accept_command, args)
    return res.exit_code, json.loads(res.output)


def test_engine_drafts_losslessly_within_the_stated_ratio_of_the_reference(engine, ggufs):
    code, doc = _run(
        [
            str(ggufs["drafter"]),
            "--target",
            str(ggufs["target"]),
            "--engine",
            "llama.cpp",
            "--llama-server",
            engine["llama_server"],
            "--hf-target",
            str(PAIR / "target"),
            "--hf-drafter",
            str(PAIR / "drafter"),
            *OPTS,
        ]
    )
    assert code == 0, doc
    assert doc["engine"] == "llama.cpp" and doc["build"] == "b11434"  # not the b0-unknown it reports
    d = doc["engine_details"]
    assert d["spec_draft_n_max"] == 7 and d["draft_n"] > 0 and 0 < d["draft_n_accepted"] <= d["draft_n"]
    assert doc["tau"]["mean"] >= 2.0 and all(p["lossless"] for p in doc["prompts"])
    # the engine's output equals its own greedy decoding without the drafter (the baseline server)
    assert doc["target_forwards"]["baseline"] > doc["target_forwards"]["speculative"]
    assert d["parity"]["ratio"] >= 0.85, d["parity"]  # the stated floor: DF755 below it
    assert "DF755" not in {f["code"] for f in doc["findings"]}


def test_hf_drafter_is_converted_first_and_expect_works(engine, ggufs):
    prompts = PAIR / "target" / "prompts.jsonl"  # without --hf-target the engine's tokenizer encodes them
    base = [
        str(PAIR / "drafter"),
        "--target",
        str(ggufs["target"]),
        "--engine",
        "llama.cpp",
        "--llama-server",
        engine["llama_server"],
        "--prompts",
        str(prompts),
        *OPTS,
    ]
    code, doc = _run(base)
    assert code == 0 and doc["engine_details"]["drafter_converted"] is True
    assert doc["prompts_source"] == str(prompts) and doc["tau"]["mean"] >= 2.0
    # the built-in English prompts are nothing this pair can recall: the engine's τ says so (DF751)
    code, doc = _run(base[:7] + OPTS)
    assert (
        code == 1 and doc["prompts_source"] == "builtin" and "DF751" in {f["code"] for f in doc["findings"]}
    )
    tau = doc["tau"]["mean"]
    code, doc = _run(base + ["--expect", f"{tau + 2:.2f}+-0.1"])
    assert code == 1 and "DF752" in {f["code"] for f in doc["findings"]}


def test_a_file_the_engine_refuses_is_an_error_with_its_log_lines(engine, ggufs, tmp_path):
    from .golden import _attn_bias

    bad = _attn_bias(ggufs["drafter"], tmp_path / "attention-bias.gguf", engine)
    code, doc = _run(
        [
            str(bad),
            "--target",
            str(ggufs["target"]),
            "--engine",
            "llama.cpp",
            "--llama-server",
            engine["llama_server"],
            *OPTS,
        ]
    )
    assert code == 3 and doc["error"]["type"] == "EngineError"
    assert any("wrong number of tensors" in line for line in doc["error"]["log_tail"])


def test_server_is_found_through_the_environment_and_missing_is_exit_3(engine, ggufs, monkeypatch):
    monkeypatch.setenv("DFLASH2_CKPT_LLAMA_SERVER", "/nonexistent/llama-server")
    code, doc = _run(
        [str(ggufs["drafter"]), "--target", str(ggufs["target"]), "--engine", "llama.cpp", *OPTS]
    )
    assert code == 3 and doc["error"]["type"] == "MissingDependencyError"
    monkeypatch.setenv("DFLASH2_CKPT_LLAMA_SERVER", engine["llama_server"])
    code, doc = _run(
        [
            str(ggufs["drafter"]),
            "--target",
            str(ggufs["target"]),
            "--engine",
            "llama.cpp",
            "--max-new-tokens",
            "8",
            "--limit",
            "1",
            "--format",
            "json",
        ]
    )
    assert code in (0, 1) and doc["engine"] == "llama.cpp"


def test_df751_is_judged_on_the_opening_at_any_length(engine, ggufs, tmp_path):
    """llama-server's counters are per request: past 32 new tokens accept asks again with 32 and judges
    those, so the trained drafter passes on long outputs and a random fc fails on them."""
    import torch  # the llama_cpp tests skip, not fail, without torch
    from safetensors.torch import load_file, save_file

    base = [
        "--target",
        str(ggufs["target"]),
        "--engine",
        "llama.cpp",
        "--llama-server",
        engine["llama_server"],
        "--hf-target",
        str(PAIR / "target"),
        "--limit",
        "4",
        "--format",
        "json",
    ]
    code, short = _run([str(ggufs["drafter"]), *base, "--max-new-tokens", "32"])
    assert code == 0 and short["tau_opening"]["mean"] == short["tau"]["mean"]
    code, long = _run([str(ggufs["drafter"]), *base, "--max-new-tokens", "256"])
    assert code == 0 and "DF751" not in {f["code"] for f in long["findings"]}, long["findings"]
    assert long["tau_opening"]["mean"] == short["tau"]["mean"] > long["tau"]["mean"]
    bad = Path(shutil.copytree(PAIR / "drafter", tmp_path / "random-fc"))
    t = load_file(bad / "model.safetensors")
    fc = t["fc.weight"]
    t["fc.weight"] = torch.randn(fc.shape, generator=torch.Generator().manual_seed(7)) * float(fc.std())
    save_file(t, bad / "model.safetensors", metadata={"format": "pt"})
    code, doc = _run([str(bad), *base, "--max-new-tokens", "256"])
    assert code == 1 and "DF751" in {f["code"] for f in doc["findings"]} and doc["tau_opening"]["mean"] < 2.6
