"""accept inside vLLM: τ from vLLM's own spec-decode counters.

Two ways in. Locally (default): vLLM's offline LLM with speculative_config {"method": "dflash"} runs in
vLLM's own environment (engines/runners/vllm_spec.py, one subprocess), each prompt as token ids, greedy,
once with the drafter and once without it; the counts are the growth of vllm:spec_decode_num_drafts /
_num_draft_tokens / _num_accepted_tokens over each request. With --server URL: a running `vllm serve`
with a DFlash speculative config gets the prompts on /v1/completions, and the counts are the growth of the
same counters on its Prometheus /metrics (…_total).

vLLM's mean acceptance length is 1 + accepted / drafts (every verification step commits its accepted
drafts plus the target's own token), which is τ as the reference loop counts it. A drafter vLLM refuses
(its config check, its loader, a kernel this machine lacks) is a usage error in vLLM's own words.
"""

from __future__ import annotations

import json
import os
import re
import time
import urllib.error
import urllib.request
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..engines.runners import vllm_runner as runner
from ..errors import ConfigError, EngineError, UsageError
from ..findings import Finding
from . import checks, stats
from .prompts import Prompt, load_prompts
from .report import AcceptReport, PromptResult

ENGINE = "vllm"
DRAFTS, DRAFT_TOKENS, ACCEPTED = (
    "vllm:spec_decode_num_drafts",
    "vllm:spec_decode_num_draft_tokens",
    "vllm:spec_decode_num_accepted_tokens",
)
COUNTED = (
    "vLLM's spec-decode counters per request: 1 + vllm:spec_decode_num_accepted_tokens / "
    "vllm:spec_decode_num_drafts (vllm/v1/spec_decode/metrics.py)"
)
REQUEST_DEADLINE_S = 600.0


def _refused(said: dict[str, Any], version: str, drafter: str) -> UsageError:
    msg = str(said.get("message", ""))
    m = re.search(r"Value error, (.*?) \[type=", msg, re.S)  # pydantic wraps a config refusal
    words = (m.group(1) if m else msg).strip().splitlines()[0] if msg.strip() else said.get("type", "")
    where = f" ({said['where']})" if said.get("where") else ""
    return UsageError(
        f"vLLM {version} refuses to run it: {said.get('type')}: {words}{where}",
        path=drafter,
        hint="`dflash2-ckpt compat DRAFTER --engine vllm` says what vLLM needs; DFlash2 drafters "
        "need the V2 model runner, which vLLM's CPU build does not have (a GPU build does)",
    )


def _block(drafter: str) -> int:
    from ..checkpoint import open_checkpoint  # lazy: checkpoint loads only on this path

    spec = open_checkpoint(drafter).spec
    if spec is None:
        raise ConfigError("not a DFlash drafter", path=drafter, hint="run `dflash2-ckpt verify` on it")
    return int(spec.block_size or 16)


def _prompts(
    target: Path, prompts: str | os.PathLike[str] | None, limit: int | None
) -> tuple[list[Prompt], str]:
    from transformers import AutoTokenizer  # heavy: transformers loads only when this runs

    return load_prompts(AutoTokenizer.from_pretrained(str(target)), prompts, target, limit)


# -- a running server ---------------------------------------------------------------------------------
def _http(url: str, body: dict[str, Any] | None = None) -> bytes:
    req = urllib.request.Request(
        url,
        data=None if body is None else json.dumps(body).encode(),
        headers={"Content-Type": "application/json"},
        method="GET" if body is None else "POST",
    )
    try:
        with urllib.request.urlopen(req, timeout=REQUEST_DEADLINE_S) as r:
            data: bytes = r.read()
            return data
    except urllib.error.HTTPError as e:
        raise EngineError(
            f"the vLLM server answered {e.code} to {url}: {e.read().decode(errors='replace')[:300]}",
            engine=ENGINE,
        ) from None
    except (urllib.error.URLError, OSError, ValueError) as e:
        raise EngineError(
            f"the vLLM server did not answer {url}: {e}",
            engine=ENGINE,
            hint="is `vllm serve` running there, with --speculative-config?",
        ) from None


def prometheus(text: str) -> dict[str, float]:
    """The spec-decode counters of a Prometheus exposition, summed over their labels (…_total samples)."""
    out = {DRAFTS: 0.0, DRAFT_TOKENS: 0.0, ACCEPTED: 0.0}
    for line in text.splitlines():
        if line.startswith("#") or not line.strip():
            continue
        name = line.split("{", 1)[0].split(" ", 1)[0]
        base = name[: -len("_total")] if name.endswith("_total") else None
        if base in out:
            out[base] += float(line.rsplit(" ", 1)[1])
    return out


def _served(url: str, plist: Sequence[Prompt], max_new: int) -> tuple[list[dict[str, Any]], str]:
    models = json.loads(_http(f"{url}/v1/models"))
    model = str(models["data"][0]["id"])
    rows = []
    for p in plist:
        before = prometheus(_http(f"{url}/metrics").decode())
        t0 = time.perf_counter()
        out = json.loads(
            _http(
                f"{url}/v1/completions",
                {
                    "model": model,
                    "prompt": p.ids,
                    "max_tokens": max_new,
                    "temperature": 0.0,
                    "return_token_ids": True,
                },
            )
        )
        seconds = time.perf_counter() - t0
        after = prometheus(_http(f"{url}/metrics").decode())
        choice = out["choices"][0]
        tokens = [int(t) for t in choice.get("token_ids") or []]
        n = len(tokens) or int(out.get("usage", {}).get("completion_tokens", 0))
        rows.append(
            {
                "tokens": tokens or [0] * n,
                "seconds": seconds,
                **{k: int(after[k] - before[k]) for k in (DRAFTS, DRAFT_TOKENS, ACCEPTED)},
            }
        )
    version = "server"
    try:
        version = str(json.loads(_http(f"{url}/version")).get("version", "server"))
    except EngineError:
        pass
    return rows, version


# -- the report ----------------------------------------------------------------------------------------
def run_vllm_accept(
    drafter: str,
    target: str | os.PathLike[str],
    *,
    prompts: str | os.PathLike[str] | None = None,
    max_new_tokens: int = 64,
    expect: Any = None,
    limit: int | None = None,
    vllm_python: str | None = None,
    server: str | None = None,
    device: str | None = None,
    reference: bool = True,
) -> AcceptReport:
    """drafter and target: HF directories (the target's tokenizer encodes the prompts)."""
    if max_new_tokens < 1:
        raise ConfigError("max_new_tokens must be at least 1", field="max_new_tokens")
    want = checks.parse_expect(expect)
    target_dir = Path(os.path.expanduser(str(target))).resolve()  # vLLM runs in another directory
    drafter_dir = Path(os.path.expanduser(str(drafter))).resolve()
    block = _block(drafter)
    plist, source = _prompts(target_dir, prompts, limit)
    t0 = time.perf_counter()
    base: list[dict[str, Any]] = []
    details: dict[str, Any] = {"num_speculative_tokens": block - 1, "counted_from": COUNTED}
    if server:
        url = server.rstrip("/")
        rows, version = _served(url, plist, max_new_tokens)
        details["server"] = url
    else:
        python = runner.find_python(vllm_python)
        got = runner.run_file(
            python,
            runner.SPEC,
            {
                "target": str(target_dir),
                "drafter": str(drafter_dir),
                "num_speculative_tokens": block - 1,
                "prompts": [p.ids for p in plist],
                "max_new_tokens": max_new_tokens,
            },
        )
        version = str(got.get("vllm", "?"))
        if "refused" in got:
            raise _refused(got["refused"], version, str(drafter))
        rows, base = got["prompts"], got.get("baseline", [])
        details["vllm_python"] = str(python)
        if "baseline_refused" in got:
            details["baseline_refused"] = got["baseline_refused"]
    findings: list[Finding] = []
    results: list[PromptResult] = []
    for i, (p, r) in enumerate(zip(plist, rows)):
        ref_tokens = base[i]["tokens"] if base else r["tokens"]
        findings += checks.lossless(p.label, ref_tokens, r["tokens"])
        d, a = r[DRAFTS], r[ACCEPTED]
        tau_p = (1 + a / d) if d else float("nan")
        results.append(
            PromptResult(
                p.label,
                len(p.ids),
                len(r["tokens"]),
                d,
                stats.Interval(tau_p, tau_p, tau_p),
                [],
                ref_tokens == r["tokens"],
                len(r["tokens"]) / r["seconds"] if r["seconds"] else 0.0,
                len(base[i]["tokens"]) / base[i]["seconds"] if base and base[i]["seconds"] else 0.0,
            )
        )
    drafts = [r[DRAFTS] for r in rows]
    accepted = [r[ACCEPTED] for r in rows]
    tau = stats.pooled_counts([a + d for a, d in zip(accepted, drafts)], drafts)
    if sum(drafts):
        findings += checks.drafting(tau.mean, block) + checks.expected(tau.mean, want)
    if sum(drafts) < checks.MIN_STEPS:
        findings += checks.caveats([], 0, sum(drafts))
    drafted = sum(r[DRAFT_TOKENS] for r in rows)
    details.update(
        {
            "draft_n": drafted,
            "draft_n_accepted": sum(accepted),
            "drafts": sum(drafts),
            "wall_s": round(time.perf_counter() - t0, 2),
        }
    )
    if reference and not server:
        from .engine import parity_run  # lazy: accept.engine loads only on this path

        details["parity"] = parity_run(
            drafter, target_dir, prompts, max_new_tokens, limit, device, tau.mean, ENGINE
        )
        findings += details["parity"].pop("findings")
    gen = sum(len(r["tokens"]) for r in rows)
    spec_s = sum(r["seconds"] for r in rows)
    base_n, base_s = sum(len(b["tokens"]) for b in base), sum(b["seconds"] for b in base)
    return AcceptReport(
        drafter=str(drafter),
        target=str(target),
        device="cpu" if not server else "server",
        kernels=ENGINE,
        block_size=block,
        max_new_tokens=max_new_tokens,
        prompts_source=source,
        tau=tau,
        acceptance_rate=sum(accepted) / drafted if drafted else 0.0,
        per_position=[],
        tokens_per_s=gen / spec_s if spec_s else 0.0,
        baseline_tokens_per_s=base_n / base_s if base_s else 0.0,
        target_forwards={
            "baseline": base_n,
            "speculative": sum(drafts) + len(rows),
            "saved": base_n - sum(drafts) - len(rows) if base else 0,
        },
        prompts=results,
        expect=want,
        findings=findings,
        engine=ENGINE,
        build=f"vllm {version}",
        engine_details=details,
    )
