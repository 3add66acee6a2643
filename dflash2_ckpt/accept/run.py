"""The accept run: load the pair, decode every prompt both ways, gather statistics and judgements."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch

from ..checkpoint import Checkpoint, open_checkpoint
from ..errors import ConfigError
from ..smoke.device import pick_device
from ..smoke.drafting import Drafter, Kernels, load_drafter
from . import checks, stats
from .loop import Decoded, greedy, speculative_batch
from .prompts import load_prompts
from .report import AcceptReport, PromptResult
from .target import Target, load_target, resolve_target

# (prompts done, prompts, label, that prompt's τ, τ pooled over the prompts done); see accept()
Progress = Callable[[int, int, str, float | None, float | None], None]


def within_budget(drafter: Any, root: Path, device: str | None, max_memory: int | None) -> None:
    """Refuse, before loading either model, a pair that would not fit (the kernel would kill the run)."""

    from ..smoke.budget import machine_budget, runtime_bytes  # lazy: smoke.budget loads only on this path
    from .budget import check_accept_budget  # lazy: accept.budget loads only on this path

    spec = (drafter if isinstance(drafter, Checkpoint) else open_checkpoint(drafter)).spec
    if spec is None:
        return  # load_drafter says why
    kind = (device or ("cuda" if torch.cuda.is_available() else "cpu")).split(":")[0]
    budget = max_memory if max_memory is not None else machine_budget(kind)
    check_accept_budget(spec, root, budget, device_type=kind, runtime=runtime_bytes())


def _pair(
    drafter: Any,
    target: Any,
    *,
    block_size: int | None,
    device: str | None,
    kernels: str | None,
    revision: str | None,
    token: str | None,
    max_memory: int | None = None,
) -> tuple[Drafter, Target, Path | None]:
    if isinstance(target, Target):
        root = None
    else:
        root = resolve_target(target, revision=revision, token=token)
    if not isinstance(drafter, Drafter) and root is not None:
        within_budget(drafter, root, device, max_memory)
    if not isinstance(drafter, Drafter):
        if kernels not in (None, "torch", "triton"):
            raise ConfigError(f"kernels {kernels!r}: choose torch or triton", field="kernels")
        k: Kernels | None = kernels  # type: ignore[assignment]
        drafter = load_drafter(
            drafter,
            target=root if root is not None else None,
            block_size=block_size,
            device=device,
            kernels=k,
        )
    elif block_size is not None:
        drafter = drafter.replace(block_size=block_size)
    if not isinstance(target, Target):
        assert root is not None
        target = load_target(
            root,
            drafter.spec.target_layer_ids,
            pick_device(device or str(drafter.device)),
            revision=revision,
            token=token,
            label=str(target),
        )
    if target.vocab_size != drafter.spec.vocab_size:
        raise ConfigError(
            f"the target's vocabulary has {target.vocab_size} tokens, the drafter's "
            f"{drafter.spec.vocab_size}",
            field="vocab_size",
            hint="pair the drafter with its own target",
        )
    return drafter, target, root


def run_accept(
    drafter_in: Any,
    target_in: Any,
    *,
    prompts: str | os.PathLike[str] | None,
    max_new_tokens: int,
    block_size: int | None,
    expect: Any,
    device: str | None,
    kernels: str | None,
    limit: int | None,
    revision: str | None,
    token: str | None,
    max_memory: int | None = None,
    batch: int = 1,
    threads: int | None = None,
    progress: Progress | None = None,
) -> AcceptReport:
    if max_new_tokens < 1:
        raise ConfigError("max_new_tokens must be at least 1", field="max_new_tokens")
    if batch < 1:
        raise ConfigError("batch must be at least 1", field="batch")
    from ..threads import apply as apply_threads  # lazy: threads loads only on this path

    chosen = apply_threads(threads)
    want = checks.parse_expect(expect)
    drafter, target, root = _pair(
        drafter_in,
        target_in,
        block_size=block_size,
        device=device,
        kernels=kernels,
        revision=revision,
        token=token,
        max_memory=max_memory,
    )
    plist, source = load_prompts(target.tokenizer, prompts, root, limit)
    target.forward(plist[0].ids[:4], taps=False)  # warm up before anything is timed
    results: list[PromptResult] = []
    findings = list(drafter.findings)
    spec_s = base_s = 0.0
    spec_tok = base_tok = spec_fw = base_fw = 0
    runs: dict[int, Decoded] = {}
    if progress is not None:
        progress(0, len(plist), plist[0].label, None, None)
    for i, p in enumerate(plist):
        ref = greedy(target, p.ids, max_new_tokens)
        if i not in runs:  # the next `batch` prompts verified together (one target forward per step)
            group = plist[i : i + batch]
            runs.update(
                zip(
                    range(i, i + len(group)),
                    speculative_batch(target, drafter, [g.ids for g in group], max_new_tokens),
                )
            )
        run = runs.pop(i)
        at = checks.first_difference(ref.tokens, run.tokens)
        gap = None
        if at is not None and at < min(len(ref.tokens), len(run.tokens)):
            gap = target.logit_gap(p.ids + ref.tokens[:at], ref.tokens[at], run.tokens[at])
        findings += checks.lossless(p.label, ref.tokens, run.tokens, gap=gap, tolerance=target.tie_tolerance)
        results.append(
            PromptResult(
                p.label,
                len(p.ids),
                len(run.tokens),
                len(run.accepted),
                stats.step_tau(run.accepted, drafter.block_size),
                run.accepted,
                ref.tokens == run.tokens,
                len(run.tokens) / run.seconds,
                len(ref.tokens) / ref.seconds,
            )
        )
        spec_s, base_s = spec_s + run.seconds, base_s + ref.seconds
        spec_tok, base_tok = spec_tok + len(run.tokens), base_tok + len(ref.tokens)
        spec_fw, base_fw = spec_fw + run.forwards, base_fw + ref.forwards
        if progress is not None:
            progress(
                i + 1,
                len(plist),
                p.label,
                results[-1].tau.mean,
                stats.pooled_tau([r.accepted for r in results]).mean,
            )
    per_prompt = [r.accepted for r in results]
    every = [a for r in per_prompt for a in r]
    drafts = drafter.block_size - 1
    tau = stats.pooled_tau(per_prompt)
    opening = checks.opening_tau(per_prompt)
    if every:
        findings += checks.judged(opening.mean, tau.mean, drafter.block_size, max_new_tokens, want)
    findings += checks.caveats(target.taps, target.num_layers, len(every))
    return AcceptReport(
        drafter=drafter.label or "(loaded drafter)",
        target=target.label,
        device=str(target.device),
        kernels=drafter.kernels,
        block_size=drafter.block_size,
        max_new_tokens=max_new_tokens,
        prompts_source=source,
        tau=tau,
        acceptance_rate=stats.acceptance_rate(every, drafts),
        per_position=stats.per_position(every, drafts),
        tokens_per_s=spec_tok / spec_s if spec_s else 0.0,
        baseline_tokens_per_s=base_tok / base_s if base_s else 0.0,
        target_forwards={"baseline": base_fw, "speculative": spec_fw, "saved": base_fw - spec_fw},
        prompts=results,
        expect=want,
        findings=findings,
        batch=batch,
        threads=chosen.to_json(),
        tau_opening=opening,
    )
