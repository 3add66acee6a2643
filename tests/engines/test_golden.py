"""Golden table: every real config in fixtures/real/ x every engine profile -> verdict and reason codes.

Each row was checked by hand against docs/engines.md; the comment names the fact it rests on. A change
to a profile that moves a verdict must change a row here.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from _kit.engines import REAL_NAMES, real_checkpoint
from dflash2_ckpt.convert.advice import compat
from dflash2_ckpt.engines import PROFILES
from dflash2_ckpt.engines.registry import ENGINE_MODULES

Q27, MUSE, Q4B = "z-lab_Qwen3.8-27B-DFlash2", "z-lab_Muse-Glimmer-30B-DFlash2", "z-lab_Qwen3-4B-DFlash-b16"
SPEC, DSPARK = "speculators-0.9.0_tiny-dflash2", "deepseek-ai_dspark_qwen3_8b_block7"

# the engines whose rows this table lists; an engine module outside it carries its rows as GOLDEN
# releases before any DSpark drafter was registered (vLLM 0.25.0's registry, SGLang 0.5.16's models/dspark.py)
NO_DSPARK = ("vllm<0.20", "vllm>=0.20,<0.23", "sglang<0.5.11", "sglang>=0.5.11,<0.5.14")
_LISTED = ("vllm", "sglang", "llama.cpp", "dflash-mlx", "mlx-vlm", "z-lab", "speculators", "transformers")

GOLDEN = (
    [
        # --- Qwen3.8-27B-DFlash2: nested v2, all sliding, is_causal false, block 8 ---
        (Q27, "vllm<0.20", "unsupported", ["DF800"]),  # vLLM 0.19.1 registers no DFlashDraftModel
        (Q27, "vllm>=0.20,<0.23", "unsupported", ["DF800"]),  # DFlash v1 only before 0.28
        (Q27, "vllm>=0.23,<0.26", "unsupported", ["DF800"]),
        (
            Q27,
            "vllm>=0.26,<0.28",
            "unsupported",
            ["DF800"],
        ),  # §1 vLLM <= 0.27: DFlash2DraftModel not registered
        (Q27, "vllm==0.28.0", "fails", ["DF802"]),  # §1 vLLM 0.28.0: 'no module ... layers.0.attention_conv'
        (
            Q27,
            "vllm>=0.29,<0.31",
            "loads",
            ["DF810", "DF810"],
        ),  # 0.29 registry + algos: loads; notes: V2 runner, 7 tokens
        (
            Q27,
            "vllm>=0.31,<0.33",
            "loads",
            ["DF810", "DF810"],
        ),  # 0.31-0.32: the same (no assistant default yet)
        (Q27, "vllm>=0.33,<0.34", "loads", ["DF810", "DF810"]),  # 0.31-0.33 the same for a dense drafter
        (Q27, "vllm>=0.34", "loads", ["DF810"]),  # 0.34.0: no V1 runner, so no runner note; tokens only
        (Q27, "sglang<0.5.11", "unsupported", ["DF800"]),  # SGLang 0.5.10 has no DFlash model
        (Q27, "sglang>=0.5.11,<0.5.14", "unsupported", ["DF800"]),  # v1 only before 0.5.19
        (Q27, "sglang>=0.5.14,<0.5.17", "unsupported", ["DF800"]),
        (Q27, "sglang==0.5.17", "unsupported", ["DF800"]),
        (Q27, "sglang>=0.5.18,<0.5.19", "unsupported", ["DF800"]),  # §1 SGLang <= 0.5.18: v1 only
        (Q27, "sglang>=0.5.19", "loads", ["DF810"]),  # §1 SGLang 0.5.19: DFlash2; honours is_causal; 8 tokens
        (
            Q27,
            "llama.cpp>=b9837,<b10662",
            "unsupported",
            ["DF800"],
        ),  # §1 no DFlash2 before b10662 (HF input: nothing to run)
        (Q27, "llama.cpp>=b10662", "needs-conversion", ["DF801"]),  # §1/§3 GGUF only: convert --to gguf
        (
            Q27,
            "dflash-mlx>=0.1.0",
            "unsupported",
            ["DF800"],
        ),  # dflash-mlx 0.1.0-0.1.8 model.py: no selector, v1 only
        (Q27, "mlx-vlm>=0.6.0,<0.6.16", "unsupported", ["DF800"]),  # mlx-vlm 0.6.15 has no dflash2/config.py
        (
            Q27,
            "mlx-vlm>=0.6.16,<0.7.0",
            "loads",
            ["DF810"],
        ),  # DFlash2Config: is_causal false; note min(5, block) drafted
        (Q27, "mlx-vlm>=0.7.0", "loads", ["DF810"]),  # same config class through 0.7.10
        (Q27, "z-lab>=0.1.0", "loads", []),  # dflash 0.1.0: DFlash2DraftModel, taps present
        (
            Q27,
            "transformers>=5.15.0,<5.17.0",
            "unsupported",
            ["DF800"],
        ),  # transformers 5.15-5.16: assistant model, no DFlash2 selector
        (
            Q27,
            "transformers>=5.17.0",
            "unsupported",
            ["DF800"],
        ),  # transformers 5.17-5.24: assistant model, no DFlash2 selector
        (Q27, "speculators>=0.9,<0.10", "needs-conversion", ["DF801"]),  # §1 speculators: flat dialect only
        # --- Muse-Glimmer-30B-DFlash2: nested v2, block 16, output_multiplier / softcapping ---
        (MUSE, "vllm<0.20", "unsupported", ["DF800"]),
        (MUSE, "vllm>=0.20,<0.23", "unsupported", ["DF800"]),
        (MUSE, "vllm>=0.23,<0.26", "unsupported", ["DF800"]),
        (MUSE, "vllm>=0.26,<0.28", "unsupported", ["DF800"]),  # §1 vLLM <= 0.27: no DFlash2
        (MUSE, "vllm==0.28.0", "fails", ["DF802"]),  # §1 vLLM 0.28.0 regression
        (MUSE, "vllm>=0.29,<0.31", "loads", ["DF810", "DF810"]),  # V2 runner note; 15 speculative tokens
        (
            MUSE,
            "vllm>=0.31,<0.33",
            "loads",
            ["DF810", "DF810"],
        ),  # 0.31-0.32: the same (no assistant default yet)
        (MUSE, "vllm>=0.33,<0.34", "loads", ["DF810", "DF810"]),  # same
        (MUSE, "vllm>=0.34", "loads", ["DF810"]),  # 0.34.0: no V1 runner, so no runner note; tokens only
        (MUSE, "sglang<0.5.11", "unsupported", ["DF800"]),
        (MUSE, "sglang>=0.5.11,<0.5.14", "unsupported", ["DF800"]),
        (MUSE, "sglang>=0.5.14,<0.5.17", "unsupported", ["DF800"]),
        (MUSE, "sglang==0.5.17", "unsupported", ["DF800"]),
        (MUSE, "sglang>=0.5.18,<0.5.19", "unsupported", ["DF800"]),  # §1 SGLang <= 0.5.18
        (MUSE, "sglang>=0.5.19", "loads", ["DF810"]),  # §1 SGLang 0.5.19
        (MUSE, "llama.cpp>=b9837,<b10662", "unsupported", ["DF800"]),  # §1 llama.cpp < b10662
        (MUSE, "llama.cpp>=b10662", "needs-conversion", ["DF801"]),  # §3 GGUF only
        (MUSE, "dflash-mlx>=0.1.0", "unsupported", ["DF800"]),  # released dflash-mlx: v1 only
        (MUSE, "mlx-vlm>=0.6.0,<0.6.16", "unsupported", ["DF800"]),  # no DFlash2 before 0.6.16
        (
            MUSE,
            "mlx-vlm>=0.6.16,<0.7.0",
            "loads",
            ["DF810"],
        ),  # drafts min(5, 16) tokens unless runtime_block_size
        (MUSE, "mlx-vlm>=0.7.0", "loads", ["DF810"]),  # same
        (MUSE, "z-lab>=0.1.0", "loads", []),  # reference
        (MUSE, "transformers>=5.15.0,<5.17.0", "unsupported", ["DF800"]),  # no DFlash2
        (MUSE, "transformers>=5.17.0", "unsupported", ["DF800"]),  # no DFlash2
        (MUSE, "speculators>=0.9,<0.10", "needs-conversion", ["DF801"]),  # §1 flat only
        # --- Qwen3-4B-DFlash-b16: nested v1, old dialect (top-level block_size / rope_theta), full attention ---
        (Q4B, "vllm<0.20", "unsupported", ["DF800"]),  # no DFlash before 0.20
        (
            Q4B,
            "vllm>=0.20,<0.23",
            "loads",
            ["DF810"],
        ),  # every layer non-causal: all full layers, meant so too
        (Q4B, "vllm>=0.23,<0.26", "loads", ["DF810"]),  # no dflash_config.causal: non-causal, meant so too
        (
            Q4B,
            "vllm>=0.26,<0.28",
            "loads",
            ["DF810"],
        ),  # §1 v1 served with the pre-DFlash2 rule: full => bidirectional
        (Q4B, "vllm==0.28.0", "loads", ["DF810"]),  # §1 the 0.28.0 regression is DFlash2 only
        (
            Q4B,
            "vllm>=0.29,<0.31",
            "loads",
            ["DF810"],
        ),  # tokens only: the V2-runner note is for DFlash2 drafters
        (Q4B, "vllm>=0.31,<0.33", "loads", ["DF810"]),  # 0.31-0.32: the same (no assistant default yet)
        (Q4B, "vllm>=0.33,<0.34", "loads", ["DF810"]),  # same
        (Q4B, "vllm>=0.34", "loads", ["DF810"]),  # 0.34.0: no V1 runner, so no runner note; tokens only
        (Q4B, "sglang<0.5.11", "unsupported", ["DF800"]),  # no DFlash before 0.5.11
        (
            Q4B,
            "sglang>=0.5.11,<0.5.14",
            "loads",
            ["DF810"],
        ),  # every layer non-causal; all full layers mean so too
        (Q4B, "sglang>=0.5.14,<0.5.17", "loads", ["DF810"]),  # full layers non-causal
        (Q4B, "sglang==0.5.17", "loads", ["DF810"]),  # full layers: is_causal absent = non-causal
        (Q4B, "sglang>=0.5.18,<0.5.19", "loads", ["DF810"]),  # §1 SGLang v1
        (Q4B, "sglang>=0.5.19", "loads", ["DF810"]),  # §1
        (Q4B, "llama.cpp>=b9837,<b10662", "needs-conversion", ["DF801"]),  # §3 GGUF only
        (Q4B, "llama.cpp>=b10662", "needs-conversion", ["DF801"]),  # §3 GGUF only
        (Q4B, "dflash-mlx>=0.1.0", "loads", []),  # v1; top-level model args present; mask and taps nested
        (Q4B, "mlx-vlm>=0.6.0,<0.6.16", "loads", []),  # reads the top-level block_size; mask and taps given
        (Q4B, "mlx-vlm>=0.6.16,<0.7.0", "loads", []),  # same v1 config reader
        (Q4B, "mlx-vlm>=0.7.0", "loads", []),  # same (plus dflash_config.causal, absent here)
        (Q4B, "z-lab>=0.1.0", "loads", []),  # reference
        (
            Q4B,
            "transformers>=5.15.0,<5.17.0",
            "fails",
            ["DF811"],
        ),  # reads the assistant export only; convert cannot write it
        (
            Q4B,
            "transformers>=5.17.0",
            "fails",
            ["DF811"],
        ),  # reads the assistant export only; convert cannot write it
        (Q4B, "speculators>=0.9,<0.10", "needs-conversion", ["DF801"]),  # §1 flat only
        # --- speculators 0.9.0 tiny DFlash2 save: flat v2, sliding_window_non_causal true, verifier present ---
        (SPEC, "vllm<0.20", "unsupported", ["DF800"]),
        (SPEC, "vllm>=0.20,<0.23", "unsupported", ["DF800"]),
        (SPEC, "vllm>=0.23,<0.26", "unsupported", ["DF800"]),
        (SPEC, "vllm>=0.26,<0.28", "unsupported", ["DF800"]),  # §1 'dflash2' rejected before DFlash2
        (SPEC, "vllm==0.28.0", "fails", ["DF802"]),  # §1 0.28.0 regression
        (
            SPEC,
            "vllm>=0.29,<0.31",
            "loads",
            ["DF810", "DF810"],
        ),  # algos.py @register_speculator("dflash2") from 0.29
        (
            SPEC,
            "vllm>=0.31,<0.33",
            "loads",
            ["DF810", "DF810"],
        ),  # 0.31-0.32: the same (no assistant default yet)
        (SPEC, "vllm>=0.33,<0.34", "loads", ["DF810", "DF810"]),  # same
        (SPEC, "vllm>=0.34", "loads", ["DF810"]),  # 0.34.0: no V1 runner, so no runner note; tokens only
        (SPEC, "sglang<0.5.11", "unsupported", ["DF800"]),
        (SPEC, "sglang>=0.5.11,<0.5.14", "unsupported", ["DF800"]),
        (SPEC, "sglang>=0.5.14,<0.5.17", "unsupported", ["DF800"]),
        (SPEC, "sglang==0.5.17", "unsupported", ["DF800"]),
        (SPEC, "sglang>=0.5.18,<0.5.19", "unsupported", ["DF800"]),  # §1 v1 only
        (SPEC, "sglang>=0.5.19", "needs-conversion", ["DF801"]),  # §1 SGLang reads the nested dialect
        (SPEC, "llama.cpp>=b9837,<b10662", "unsupported", ["DF800"]),  # §1
        # §3: its 64-wide embedding cannot hold top-k 16's 272 scores (the converter writes dflash.attention.causal
        # from the layers, which llama.cpp b11434 reads alone, so causality no longer differs)
        (SPEC, "llama.cpp>=b10662", "fails", ["DF814", "DF804"]),
        (SPEC, "dflash-mlx>=0.1.0", "unsupported", ["DF800"]),  # v1 only
        (SPEC, "mlx-vlm>=0.6.0,<0.6.16", "unsupported", ["DF800"]),  # no DFlash2
        (SPEC, "mlx-vlm>=0.6.16,<0.7.0", "needs-conversion", ["DF801"]),  # reads the nested dialect
        (SPEC, "mlx-vlm>=0.7.0", "needs-conversion", ["DF801"]),  # reads the nested dialect
        (SPEC, "z-lab>=0.1.0", "needs-conversion", ["DF801"]),  # reference reads nested
        (SPEC, "transformers>=5.15.0,<5.17.0", "unsupported", ["DF800"]),  # no DFlash2
        (SPEC, "transformers>=5.17.0", "unsupported", ["DF800"]),  # no DFlash2
        (SPEC, "speculators>=0.9,<0.10", "loads", []),  # §1 its own save, verifier present
    ]
    + [
        # --- DSpark: DFlash's sibling family; vLLM's and SGLang's registries and llama.cpp's draft-dspark serve it,
        # this toolkit validates nothing further (DF850); the other engines have no DSpark drafter ---
        (
            DSPARK,
            p.id,
            *(
                ("not-validated", ["DF850"])
                if (p.engine in ("vllm", "sglang") and p.id not in NO_DSPARK) or p.id == "llama.cpp>=b10662"
                else ("unsupported", ["DF800"])
            ),
        )
        for p in PROFILES
        if p.engine in _LISTED
    ]
    + [
        # an engine module may carry its own rows: GOLDEN = ((real config name, profile id, verdict, codes), ...)
        (n, p, v, list(c))
        for m in ENGINE_MODULES
        for n, p, v, c in getattr(m, "GOLDEN", ())
    ]
)


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    root: Path = tmp_path_factory.mktemp("real")
    return {name: compat(real_checkpoint(root, name)) for name in REAL_NAMES}


def test_golden_covers_every_real_config_and_profile() -> None:
    assert {(n, p) for n, p, _, _ in GOLDEN} == {(n, p.id) for n in REAL_NAMES for p in PROFILES}


@pytest.mark.parametrize("name,profile,verdict,codes", GOLDEN, ids=[f"{r[0]}|{r[1]}" for r in GOLDEN])
def test_golden(reports: dict, name: str, profile: str, verdict: str, codes: list[str]) -> None:
    [v] = [v for v in reports[name].verdicts if v.profile.id == profile]
    assert (v.verdict, [r.code for r in v.reasons]) == (verdict, codes)
    assert (v.serve is not None) == (verdict == "loads" and v.profile.serve is not None)


def test_serve_commands_follow_each_engines_draft_token_convention(reports: dict) -> None:
    by = {v.profile.id: v.serve for v in reports[Q27].verdicts}
    assert '"method": "dflash"' in by["vllm>=0.34"] and '"num_speculative_tokens": 7' in by["vllm>=0.34"]
    assert "--speculative-algorithm DFLASH" in by["sglang>=0.5.19"]
    assert "--speculative-num-draft-tokens 8" in by["sglang>=0.5.19"]
    muse = {v.profile.id: v.serve for v in reports[MUSE].verdicts}
    assert '"num_speculative_tokens": 15' in muse["vllm>=0.34"]


def test_gguf_conversion_command_is_given(reports: dict) -> None:
    [v] = [v for v in reports[Q27].verdicts if v.profile.id == "llama.cpp>=b10662"]
    assert v.reasons[0].details["command"].startswith("dflash2-ckpt convert ")
    assert "--to gguf -o DRAFTER.gguf --target TARGET" in v.reasons[0].details["command"]
