"""accept: measure that a drafter drafts, against its real target (the `[accept]` extra).

Importing this package is free; torch and transformers load only when `accept` runs.
"""

from __future__ import annotations

import importlib.util
import os
from typing import TYPE_CHECKING, Any

from ..errors import MissingDependencyError

if TYPE_CHECKING:
    from .report import AcceptReport, PromptResult
    from .run import Progress


def __getattr__(name: str) -> object:
    if name in ("AcceptReport", "PromptResult"):  # the report types load on first use: start-up stays light
        from . import report  # lazy: accept.report loads only on this path

        return getattr(report, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["AcceptReport", "PromptResult", "accept", "require_accept_deps"]


def require_accept_deps() -> None:
    missing = [m for m in ("torch", "transformers", "numpy") if importlib.util.find_spec(m) is None]
    if missing:
        raise MissingDependencyError(
            f"accept needs {', '.join(missing)}, which is not installed",
            hint="pip install 'dflash2-ckpt[accept]'",
        )


def accept(
    drafter: Any,
    target: str | os.PathLike[str] | Any,
    *,
    prompts: str | os.PathLike[str] | None = None,
    max_new_tokens: int = 64,
    block_size: int | None = None,
    expect: str | float | tuple[float, float] | None = None,
    device: str | None = None,
    kernels: str | None = None,
    limit: int | None = None,
    revision: str | None = None,
    token: str | None = None,
    max_memory: int | None = None,
    batch: int = 1,
    threads: int | None = None,
    progress: Progress | None = None,
) -> AcceptReport:
    """Run block speculative decoding of `target` with `drafter` and return the statistics.

    drafter: a checkpoint directory, Source, opened Checkpoint, or a loaded smoke Drafter.
    target: a transformers model directory, a Hub repo id (org/name[@rev]), or a loaded accept Target.
    prompts: JSONL of {"prompt"} / {"messages"}; default: the target's prompts.jsonl, else built-in.
    expect: the published mean acceptance length, "TAU" or "TAU±TOL" (DF752 outside it).
    max_memory: bytes the pair may take (default: a safe share of the device's memory); BudgetError,
    before anything loads, when the estimate is over it.
    batch: prompts decoded together, one target forward per step for all of them (same tokens, same τ).
    threads: torch's intra-op threads (default: chosen from OMP_NUM_THREADS, the cores and the load).
    progress: called as (0, prompts, first label, None, None) before the first prompt, then after each
    prompt as (prompts done, prompts, its label, its τ, τ pooled over the prompts done so far).
    Raises MissingDependencyError without torch/transformers, ConfigError / SourceError when the
    drafter, target or prompts cannot be used.
    """
    require_accept_deps()
    from ..smoke import require_smoke_deps  # lazy: smoke loads only on this path

    require_smoke_deps()
    from .run import run_accept  # lazy: accept.run loads only on this path

    return run_accept(
        drafter,
        target,
        prompts=prompts,
        max_new_tokens=max_new_tokens,
        block_size=block_size,
        expect=expect,
        device=device,
        kernels=kernels,
        limit=limit,
        revision=revision,
        token=token,
        max_memory=max_memory,
        batch=batch,
        threads=threads,
        progress=progress,
    )
