"""accept inside a serving engine: τ measured by llama.cpp's own draft counters.

The drafter runs where users serve it: `llama-server -m TARGET.gguf -md DRAFTER.gguf --spec-type
draft-dflash`. Each prompt is sent as token ids, greedy, once with the drafter and once without it, so
the report gives τ from the engine's counters, the engine's tokens/s with and without drafting, and
whether drafting changed the text (it must not: greedy verification is lossless). With the HF drafter
and target as well, the same prompts run through the reference loop and the report compares the two τ.
"""

from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path
from typing import Any

from ..engines.runners.llama_cpp import ENGINE, Completion, LlamaServer, find_server, resolve_build
from ..errors import ConfigError, SourceError
from ..findings import Finding
from . import accept, checks, stats
from .prompts import Prompt, encode, prompt_rows
from .report import AcceptReport, PromptResult

CTX = 2048


def _gguf_block(path: Path) -> int:
    from ..checkpoint import open_checkpoint  # lazy: checkpoint loads only on this path

    ck = open_checkpoint(path)
    if ck.spec is None:
        raise ConfigError(
            "the drafter GGUF does not describe a DFlash drafter",
            path=str(path),
            hint="run `dflash2-ckpt verify` on it",
        )
    return int(ck.spec.block_size or 16)


def drafter_gguf(drafter: str | os.PathLike[str]) -> Path:
    p = Path(os.path.expanduser(str(drafter)))
    if p.suffix != ".gguf":
        raise SourceError(
            "with --engine llama.cpp the drafter is a GGUF file here",
            path=str(p),
            hint="the CLI converts an HF drafter first (dflash2-ckpt convert --to gguf)",
        )
    if not p.is_file():
        raise SourceError("drafter GGUF not found", path=str(p))
    return p


def engine_prompts(
    server: LlamaServer,
    prompts: str | os.PathLike[str] | None,
    tokenizer: Any,
    hf_target: Path | None,
    limit: int | None,
) -> tuple[list[Prompt], str]:
    """The reference accept's prompt sources; token ids from the HF tokenizer when an HF target is given
    (so both loops see the same ids), else from the engine's own tokenizer and chat template."""
    rows, source = prompt_rows(prompts, hf_target, limit)
    if tokenizer is not None:
        return [Prompt(label, encode(tokenizer, row, label)) for label, row in rows], source
    out = []
    for label, row in rows:
        if "messages" in row:
            ids = server.tokenize(server.apply_template(row["messages"]), add_special=False)
        else:
            ids = server.tokenize(row["prompt"], add_special=True)
        if not ids:
            raise ConfigError(f"{label}: the prompt encodes to no token")
        out.append(Prompt(label, ids))
    return out, source


def _serve(binary: Path, target: Path, plist: list[Prompt], max_new: int) -> list[Completion]:
    """The same prompts through the target alone: the engine's own greedy text and speed without drafting."""
    with LlamaServer(binary, target, None, ctx=CTX) as server:
        try:
            server.complete(plist[0].ids[:4], 2)
            return [server.complete(p.ids, max_new) for p in plist]
        finally:
            server.cleanup()


def _hf_tokenizer(hf_target: Path | None) -> Any:
    """The HF target's tokenizer, so the engine and the reference loop see the same ids; None without one."""
    if hf_target is None:
        return None
    from transformers import AutoTokenizer  # heavy: loaded only when an HF target is given

    return AutoTokenizer.from_pretrained(str(hf_target))


def _judged(
    opening: stats.Interval, tau: stats.Interval, steps: int, block: int, max_new: int, want: Any
) -> list[Finding]:
    """τ judged against the block size and --expect, and the caveat of too few drafting steps."""
    out: list[Finding] = []
    if steps:
        out += checks.judged(opening.mean, tau.mean, block, max_new, want)
    if steps < checks.MIN_STEPS:
        out += checks.caveats([], 0, steps)
    return out


def _engine_target(target: str | os.PathLike[str]) -> Path:
    """The target GGUF llama-server loads (the HF target, for the reference run, comes with --hf-target)."""
    target_path = Path(os.path.expanduser(str(target)))
    if target_path.suffix != ".gguf" or not target_path.is_file():
        raise SourceError(
            "with --engine llama.cpp the target is a GGUF file",
            path=str(target),
            hint="convert the target with llama.cpp's convert_hf_to_gguf.py; give the HF target "
            "with --hf-target for the reference comparison",
        )
    return target_path


def _drafted_runs(
    server: LlamaServer,
    binary: Path,
    prompts: str | os.PathLike[str] | None,
    tokenizer: Any,
    hf_t: Path | None,
    limit: int | None,
    max_new_tokens: int,
    block: int,
) -> tuple[str, dict[str, Any], list[Prompt], str, list[Completion], list[Completion]]:
    """(build, how the build was found, prompts, their source, the drafted runs, the runs DF751 judges)."""
    try:
        build, build_how = resolve_build(binary, server.build_info())
        plist, source = engine_prompts(server, prompts, tokenizer, hf_t, limit)
        need = max(len(p.ids) for p in plist) + max_new_tokens + block
        if need > CTX:
            raise ConfigError(
                f"the longest prompt plus {max_new_tokens} new tokens needs {need} positions; "
                f"the engine runs with {CTX}",
                field="max_new_tokens",
                hint="lower --max-new-tokens or give shorter prompts",
            )
        server.complete(plist[0].ids[:4], 2)  # warm up before anything is timed
        runs = [server.complete(p.ids, max_new_tokens) for p in plist]
        # DF751 judges the opening of every output: its counters come from a run that long
        openings = (
            [server.complete(p.ids, checks.OPENING_TOKENS) for p in plist]
            if max_new_tokens > checks.OPENING_TOKENS
            else runs
        )
    finally:
        server.cleanup()
    return build, build_how, plist, source, runs, openings


def _per_prompt(
    plist: list[Prompt], runs: list[Completion], base: list[Completion]
) -> tuple[list[Finding], list[PromptResult], list[int], list[int]]:
    """(lossless findings, one row per prompt, committed tokens per prompt, drafting steps per prompt)."""
    findings: list[Finding] = []
    results: list[PromptResult] = []
    committed, steps = [], []
    for i, (p, r) in enumerate(zip(plist, runs)):
        ref_tokens = base[i].tokens if base else r.tokens
        findings += checks.lossless(p.label, ref_tokens, r.tokens)
        s = r.steps
        c = r.predicted_n - 1
        committed.append(c)
        steps.append(s)
        tau_p = (
            stats.Interval(c / s, c / s, c / s)
            if s
            else stats.Interval(float("nan"), float("nan"), float("nan"))
        )
        results.append(
            PromptResult(
                p.label,
                len(p.ids),
                len(r.tokens),
                s,
                tau_p,
                [],
                ref_tokens == r.tokens,
                r.predicted_per_second,
                base[i].predicted_per_second if base else 0.0,
            )
        )
    return findings, results, committed, steps


def run_engine_accept(
    drafter: str | os.PathLike[str],
    target: str | os.PathLike[str],
    *,
    prompts: str | os.PathLike[str] | None = None,
    max_new_tokens: int = 64,
    expect: Any = None,
    limit: int | None = None,
    llama_server: str | None = None,
    hf_drafter: str | os.PathLike[str] | None = None,
    hf_target: str | os.PathLike[str] | None = None,
    baseline: bool = True,
    device: str | None = None,
    converted_from: str | None = None,
) -> AcceptReport:
    """drafter: a GGUF (converted_from names the HF drafter it was converted from, which the parity run uses)."""
    if max_new_tokens < 1:
        raise ConfigError("max_new_tokens must be at least 1", field="max_new_tokens")
    want = checks.parse_expect(expect)
    binary = find_server(llama_server)
    target_path = _engine_target(target)
    hf_t = Path(os.path.expanduser(str(hf_target))) if hf_target else None
    if hf_drafter is None and converted_from is not None:
        hf_drafter = converted_from
    tokenizer = _hf_tokenizer(hf_t)
    with tempfile.TemporaryDirectory(prefix="dflash2-accept-engine-"):
        t0 = time.perf_counter()
        draft, converted = drafter_gguf(drafter), converted_from is not None
        block = _gguf_block(draft)
        n_max = block - 1
        with LlamaServer(binary, target_path, draft, n_max=n_max, ctx=CTX) as server:
            build, build_how, plist, source, runs, openings = _drafted_runs(
                server, binary, prompts, tokenizer, hf_t, limit, max_new_tokens, block
            )
        base: list[Completion] = []
        if baseline:
            base = _serve(binary, target_path, plist, max_new_tokens)
        seconds = time.perf_counter() - t0
    findings, results, committed, steps = _per_prompt(plist, runs, base)
    tau = stats.pooled_counts(committed, steps)
    drafted = sum(r.draft_n for r in runs)
    accepted = sum(r.draft_n_accepted for r in runs)
    opening = stats.pooled_counts([r.predicted_n - 1 for r in openings], [r.steps for r in openings])
    findings += _judged(opening, tau, sum(steps), block, max_new_tokens, want)
    parity = None
    if hf_t is not None and hf_drafter is not None:
        parity = parity_run(hf_drafter, hf_t, prompts, max_new_tokens, limit, device, tau.mean)
        findings += parity.pop("findings")
    details = {
        "llama_server": str(binary),
        "spec_draft_n_max": n_max,
        "draft_n": drafted,
        "draft_n_accepted": accepted,
        "drafter_converted": converted,
        "wall_s": round(seconds, 2),
        **build_how,
        **({"parity": parity} if parity else {}),
    }
    return _engine_report(
        drafter=converted_from or str(drafter),
        target=str(target),
        block=block,
        max_new_tokens=max_new_tokens,
        source=source,
        tau=tau,
        opening=opening,
        acceptance_rate=accepted / drafted if drafted else 0.0,
        runs=runs,
        base=base,
        steps=steps,
        results=results,
        want=want,
        findings=findings,
        build=build,
        details=details,
    )


def _engine_report(
    *,
    drafter: str,
    target: str,
    block: int,
    max_new_tokens: int,
    source: str,
    tau: stats.Interval,
    opening: stats.Interval,
    acceptance_rate: float,
    runs: list[Completion],
    base: list[Completion],
    steps: list[int],
    results: list[PromptResult],
    want: Any,
    findings: list[Finding],
    build: str,
    details: dict[str, Any],
) -> AcceptReport:
    """The report of an engine run: speeds from the engine's own counters, target forwards saved."""
    gen = sum(len(r.tokens) for r in runs)
    spec_s = sum(r.predicted_n / r.predicted_per_second for r in runs if r.predicted_per_second)
    base_s = sum(b.predicted_n / b.predicted_per_second for b in base if b.predicted_per_second)
    return AcceptReport(
        drafter=drafter,
        target=target,
        device="cpu",
        kernels=ENGINE,
        block_size=block,
        max_new_tokens=max_new_tokens,
        prompts_source=source,
        tau=tau,
        acceptance_rate=acceptance_rate,
        per_position=[],
        tokens_per_s=gen / spec_s if spec_s else 0.0,
        baseline_tokens_per_s=sum(b.predicted_n for b in base) / base_s if base_s else 0.0,
        target_forwards={
            "baseline": sum(b.predicted_n for b in base),
            "speculative": sum(steps) + len(runs),
            "saved": sum(b.predicted_n for b in base) - sum(steps) - len(runs) if base else 0,
        },
        prompts=results,
        expect=want,
        findings=findings,
        engine=ENGINE,
        build=build,
        engine_details=details,
        tau_opening=opening,
    )


def parity_run(
    hf_drafter: str | os.PathLike[str],
    hf_target: Path,
    prompts: str | os.PathLike[str] | None,
    max_new: int,
    limit: int | None,
    device: str | None,
    tau_engine: float,
    engine: str = ENGINE,
) -> dict[str, Any]:
    ref = accept(
        hf_drafter, hf_target, prompts=prompts, max_new_tokens=max_new, limit=limit, device=device or "cpu"
    )
    # llama-server (and vLLM) crop the last step at the token limit as transformers does: compare like with like
    committed = checks.committed_tau([f.generated for f in ref.prompts], [f.steps for f in ref.prompts])
    ratio = tau_engine / committed if committed else 0.0
    return {
        "tau_engine": round(tau_engine, 4),
        "tau_reference": round(ref.tau.mean, 4),
        "tau_reference_committed": round(committed, 4),
        "ratio": round(ratio, 4),
        "floor": checks.PARITY_FLOOR,
        "findings": checks.parity(engine, tau_engine, committed),
    }
