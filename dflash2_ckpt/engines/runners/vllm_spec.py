"""Speculative decoding inside vLLM, counted by vLLM: run as a file by the python of a vLLM install, never
imported by the toolkit (it imports nothing of dflash2_ckpt).

    <vllm python> vllm_spec.py REQUEST.json      (prints one JSON object on stdout)

REQUEST.json: {"target", "drafter", "num_speculative_tokens", "prompts": [[token ids]], "max_new_tokens",
"baseline": true}. Each prompt is its own request, counted by the counters' growth over it.
The engine is vLLM's offline LLM with speculative_config {"method": "dflash", ...}, greedy sampling; the
counts are vLLM's own spec-decode counters (LLM.get_metrics(): vllm:spec_decode_num_drafts,
_num_draft_tokens, _num_accepted_tokens, _num_accepted_tokens_per_pos). Then the same prompts run through
the target alone, for the lossless check and the speed without drafting. A refusal (vLLM's config
check, its loader, or a kernel it lacks on this machine) is the answer: {"refused": {type, message, where}}.
"""

from __future__ import annotations

import contextlib
import io
import json
import logging
import os
import sys
import time
import traceback
from typing import Any

COUNTERS = (
    "vllm:spec_decode_num_drafts",
    "vllm:spec_decode_num_draft_tokens",
    "vllm:spec_decode_num_accepted_tokens",
)
PER_POS = "vllm:spec_decode_num_accepted_tokens_per_pos"


def _error(e: BaseException) -> dict[str, Any]:
    frames = [f for f in traceback.extract_tb(e.__traceback__) if "/vllm/" in f.filename]
    where = f"vllm/{frames[-1].filename.split('/vllm/', 1)[1]}:{frames[-1].lineno}" if frames else None
    return {"type": type(e).__name__, "message": str(e).strip()[:2000], "where": where}


def _llm(req: dict[str, Any], spec: bool) -> Any:
    from vllm import LLM  # heavy: vllm loads only when this runs

    kw: dict[str, Any] = {}
    if spec:
        kw["speculative_config"] = {
            "method": "dflash",
            "model": req["drafter"],
            "num_speculative_tokens": req["num_speculative_tokens"],
        }
    return LLM(
        model=req["target"],
        enforce_eager=True,
        dtype="float32",
        disable_log_stats=False,
        seed=0,
        skip_tokenizer_init=True,
        max_model_len=req.get("max_model_len"),
        gpu_memory_utilization=req.get("gpu_memory_utilization", 0.1),
        **kw,
    )


def _warm(llm: Any, req: dict[str, Any]) -> None:
    from vllm import SamplingParams  # heavy: vllm loads only when this runs

    llm.generate(
        [{"prompt_token_ids": req["prompts"][0][:4]}],
        SamplingParams(temperature=0.0, max_tokens=2),
        use_tqdm=False,
    )


def _one(llm: Any, ids: list[int], max_new: int) -> tuple[list[int], float]:
    from vllm import SamplingParams  # heavy: vllm loads only when this runs

    t0 = time.perf_counter()
    [out] = llm.generate(
        [{"prompt_token_ids": ids}], SamplingParams(temperature=0.0, max_tokens=max_new), use_tqdm=False
    )
    return list(out.outputs[0].token_ids), time.perf_counter() - t0


def _counters(llm: Any) -> dict[str, Any]:
    got: dict[str, Any] = {k: 0 for k in COUNTERS}
    for m in llm.get_metrics():
        if m.name in COUNTERS:
            got[m.name] = int(m.value)
        elif m.name == PER_POS:
            got[m.name] = [int(v) for v in m.values]
    return got


def run(req: dict[str, Any]) -> dict[str, Any]:
    """Each prompt alone, its counts the counters' growth over its request."""
    rows = []
    try:
        llm = _llm(req, True)
        _warm(llm, req)
        for ids in req["prompts"]:
            before = _counters(llm)
            tokens, seconds = _one(llm, ids, req["max_new_tokens"])
            after = _counters(llm)
            rows.append({"tokens": tokens, "seconds": seconds, **{k: after[k] - before[k] for k in COUNTERS}})
        per_pos = _counters(llm).get(PER_POS, [])
    except Exception as e:  # noqa: BLE001 - vLLM's refusal is the answer
        return {"refused": _error(e)}
    del llm
    out: dict[str, Any] = {"prompts": rows, "per_position": per_pos}
    if req.get("baseline", True):
        try:
            base = _llm(req, False)
            _warm(base, req)
            out["baseline"] = [
                dict(zip(("tokens", "seconds"), _one(base, ids, req["max_new_tokens"])))
                for ids in req["prompts"]
            ]
        except Exception as e:  # noqa: BLE001
            out["baseline_refused"] = _error(e)
    return out


def main(argv: list[str]) -> int:
    with open(argv[1], encoding="utf-8") as f:
        req = json.load(f)
    os.environ.setdefault("VLLM_ENABLE_V1_MULTIPROCESSING", "0")
    os.environ.setdefault("VLLM_CPU_KVCACHE_SPACE", "1")
    logging.disable(logging.WARNING)
    import vllm  # heavy: vllm loads only when this runs

    with contextlib.redirect_stdout(io.StringIO()):
        out = run(req)
    json.dump({"vllm": vllm.__version__, **out}, sys.stdout)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
