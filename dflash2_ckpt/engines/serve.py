"""The command line that serves a drafter on each engine, built from its block size.

vLLM: `--speculative-config` JSON with method "dflash" (also for DFlash2) and num_speculative_tokens =
block_size - 1 (vllm-project/vllm#52816). SGLang: `--speculative-algorithm DFLASH
--speculative-draft-model-path` (sgl-project/sglang#35371; the flags as in z-lab/dflash:README.md "Serving
with SGLang" and public launch scripts such as huggingface.co/FasterDFlash/Hanrui test/start_server_dflash.sh)
with speculative_num_draft_tokens = block_size. dflash-mlx, the z-lab reference and speculators are Python
APIs with no documented serve command: their verdicts carry none. llama.cpp: `-md DRAFT.gguf --spec-type draft-dflash --spec-draft-n-max N`, N <= block_size - 1
(ggml-org/llama.cpp#27342).
"""

from __future__ import annotations

import json
import shlex

from .profile import Drafter

TARGET = "TARGET"


def _target(d: Drafter) -> str:
    return shlex.quote(d.target) if d.target else TARGET


def vllm(d: Drafter, block: int | None) -> str | None:
    if block is None:
        return None
    cfg = {"method": "dflash", "model": d.path, "num_speculative_tokens": block - 1}
    return f"vllm serve {_target(d)} --speculative-config {shlex.quote(json.dumps(cfg))}"


def sglang(d: Drafter, block: int | None) -> str | None:
    if block is None:
        return None
    return (
        f"python -m sglang.launch_server --model-path {_target(d)} --speculative-algorithm DFLASH "
        f"--speculative-draft-model-path {shlex.quote(d.path)} --speculative-num-draft-tokens {block}"
    )


def llamacpp(d: Drafter, block: int | None) -> str | None:
    if block is None:
        return None
    target = shlex.quote(d.target) if d.target else "TARGET.gguf"
    return (
        f"llama-server -m {target} -md {shlex.quote(d.path)} --spec-type draft-dflash "
        f"--spec-draft-n-max {block - 1}"
    )
