"""Golden table: every real config in fixtures/real/ x every engine profile -> verdict and reason codes.

Each row was checked by hand against shared/ENGINES.md; the comment names the fact it rests on. A change
to a profile that moves a verdict must change a row here.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from dflash2_ckpt.usecases.compat import compat
from dflash2_ckpt.engines import PROFILES

from _kit.engines import REAL_NAMES, real_checkpoint

Q27, MUSE, Q4B = "z-lab_Qwen3.8-27B-DFlash2", "z-lab_Muse-Glimmer-30B-DFlash2", "z-lab_Qwen3-4B-DFlash-b16"
SPEC, DSPARK = "speculators-0.9.0_tiny-dflash2", "deepseek-ai_dspark_qwen3_8b_block7"

GOLDEN = [
    # --- Qwen3.8-27B-DFlash2: nested v2, all sliding, is_causal false, block 8 ---
    (Q27, "vllm<0.28", "unsupported", ["DF800"]),            # §1 vLLM <= 0.27: DFlash2DraftModel not registered
    (Q27, "vllm==0.28.0", "fails", ["DF802"]),               # §1 vLLM 0.28.0: 'no module ... layers.0.attention_conv'
    (Q27, "vllm>=0.29", "loads", ["DF810", "DF810"]),        # §1 vLLM >= 0.29 loads; notes: V2 runner, 7 tokens
    (Q27, "sglang<0.5.19", "unsupported", ["DF800"]),        # §1 SGLang <= 0.5.18: v1 only
    (Q27, "sglang>=0.5.19", "loads", ["DF810"]),             # §1 SGLang 0.5.19: DFlash2; honours is_causal; 8 tokens
    (Q27, "llama.cpp<b10658", "unsupported", ["DF800"]),     # §1 no DFlash2 before b10658 (HF input: nothing to run)
    (Q27, "llama.cpp>=b10658", "needs-conversion", ["DF801"]),  # §1/§3 GGUF only: convert --to gguf
    (Q27, "dflash-mlx", "loads", ["DF810"]),                 # §1 is_causal false, all sliding, T2/G16/R256/K16, no lm_head
    (Q27, "mlx-vlm", "unsupported", ["DF800"]),              # §1 mlx-vlm before its DFlash2 support
    (Q27, "z-lab", "loads", []),                             # §1 z-lab reference: DFlash2DraftModel, taps present
    (Q27, "speculators>=0.9,<0.10", "needs-conversion", ["DF801"]),  # §1 speculators: flat dialect only
    # --- Muse-Glimmer-30B-DFlash2: nested v2, block 16, output_multiplier / softcapping ---
    (MUSE, "vllm<0.28", "unsupported", ["DF800"]),           # §1 vLLM <= 0.27: no DFlash2
    (MUSE, "vllm==0.28.0", "fails", ["DF802"]),              # §1 vLLM 0.28.0 regression
    (MUSE, "vllm>=0.29", "loads", ["DF810", "DF810"]),       # §1 vLLM >= 0.29; 15 speculative tokens
    (MUSE, "sglang<0.5.19", "unsupported", ["DF800"]),       # §1 SGLang <= 0.5.18
    (MUSE, "sglang>=0.5.19", "loads", ["DF810"]),            # §1 SGLang 0.5.19
    (MUSE, "llama.cpp<b10658", "unsupported", ["DF800"]),    # §1 llama.cpp < b10658
    (MUSE, "llama.cpp>=b10658", "needs-conversion", ["DF801"]),  # §3 GGUF only
    (MUSE, "dflash-mlx", "loads", ["DF810"]),                # §1 geometry fits; drafts min(5, 16) tokens
    (MUSE, "mlx-vlm", "unsupported", ["DF800"]),             # §1 no DFlash2
    (MUSE, "z-lab", "loads", []),                            # §1 reference
    (MUSE, "speculators>=0.9,<0.10", "needs-conversion", ["DF801"]),  # §1 flat only
    # --- Qwen3-4B-DFlash-b16: nested v1, old dialect (top-level block_size / rope_theta), full attention ---
    (Q4B, "vllm<0.28", "loads", ["DF810"]),                  # §1 v1 served with the pre-DFlash2 rule: full => bidirectional
    (Q4B, "vllm==0.28.0", "loads", ["DF810"]),               # §1 the 0.28.0 regression is DFlash2 only
    (Q4B, "vllm>=0.29", "loads", ["DF810", "DF810"]),        # §1
    (Q4B, "sglang<0.5.19", "loads", ["DF810"]),              # §1 SGLang v1
    (Q4B, "sglang>=0.5.19", "loads", ["DF810"]),             # §1
    (Q4B, "llama.cpp<b10658", "needs-conversion", ["DF801"]),   # §3 GGUF only
    (Q4B, "llama.cpp>=b10658", "needs-conversion", ["DF801"]),  # §3 GGUF only
    (Q4B, "dflash-mlx", "unsupported", ["DF800"]),           # §1 dflash-mlx needs DFlash2DraftModel
    (Q4B, "mlx-vlm", "loads", []),                           # §1 reads the top-level block_size; mask and taps given
    (Q4B, "z-lab", "loads", []),                             # §1 reference
    (Q4B, "speculators>=0.9,<0.10", "needs-conversion", ["DF801"]),  # §1 flat only
    # --- speculators 0.9.0 tiny DFlash2 save: flat v2, sliding_window_non_causal true, verifier present ---
    (SPEC, "vllm<0.28", "unsupported", ["DF800"]),           # §1 'dflash2' rejected before DFlash2
    (SPEC, "vllm==0.28.0", "fails", ["DF802"]),              # §1 0.28.0 regression
    (SPEC, "vllm>=0.29", "loads", ["DF810", "DF810"]),       # §1 flat 'dflash2' via #53797
    (SPEC, "sglang<0.5.19", "unsupported", ["DF800"]),       # §1 v1 only
    (SPEC, "sglang>=0.5.19", "needs-conversion", ["DF801"]),  # §1 SGLang reads the nested dialect
    (SPEC, "llama.cpp<b10658", "unsupported", ["DF800"]),    # §1
    (SPEC, "llama.cpp>=b10658", "needs-conversion", ["DF801"]),  # §3
    (SPEC, "dflash-mlx", "needs-conversion", ["DF801"]),     # §1 dflash-mlx reads the nested dialect
    (SPEC, "mlx-vlm", "unsupported", ["DF800"]),             # §1 no DFlash2
    (SPEC, "z-lab", "needs-conversion", ["DF801"]),          # §1 reference reads nested
    (SPEC, "speculators>=0.9,<0.10", "loads", []),           # §1 its own save, verifier present
] + [
    # --- DSpark: not a DFlash drafter, no engine profile runs it ---
    (DSPARK, p.id, "unsupported", ["DF800"]) for p in PROFILES
]


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
    assert '"method": "dflash"' in by["vllm>=0.29"] and '"num_speculative_tokens": 7' in by["vllm>=0.29"]
    assert "--speculative-algorithm DFLASH" in by["sglang>=0.5.19"]
    assert "--speculative-num-draft-tokens 8" in by["sglang>=0.5.19"]
    muse = {v.profile.id: v.serve for v in reports[MUSE].verdicts}
    assert '"num_speculative_tokens": 15' in muse["vllm>=0.29"]


def test_gguf_conversion_command_is_given(reports: dict) -> None:
    [v] = [v for v in reports[Q27].verdicts if v.profile.id == "llama.cpp>=b10658"]
    assert v.reasons[0].details["command"].startswith("dflash2-ckpt convert ")
    assert "--to gguf -o DRAFTER.gguf --target TARGET" in v.reasons[0].details["command"]
