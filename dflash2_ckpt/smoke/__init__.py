"""Smoke forward: prove a drafter's tensors actually draft (the `[smoke]` extra: torch, triton).

Importing this package is free; torch and triton load only when `run_smoke` runs, so the
header-level toolkit never pays for them.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from .opening import _tensor_files, open_for_smoke, require_smoke_deps
from .report import SmokeReport

__all__ = ["SmokeReport", "require_smoke_deps", "run_smoke", "draft", "load_drafter", "open_for_smoke"]


def draft(checkpoint: Any, hidden_states: Any, anchors: Any, **options: Any) -> Any:
    """Draft one block per request and return every stage (smoke.drafting.DraftResult); torch loads here."""
    from .drafting import draft as _draft
    return _draft(checkpoint, hidden_states, anchors, **options)


def load_drafter(checkpoint: Any, **options: Any) -> Any:
    """Load a drafter once for repeated drafting (smoke.drafting.Drafter); torch loads here."""
    from .drafting import load_drafter as _load
    return _load(checkpoint, **options)


def _target_dir(target: Any) -> Path | None:
    """A target directory, or an opened Source: a local one lends its directory; a Hub one only its
    config (the weights are not downloaded for a smoke), so the smoke falls back to random embeddings."""
    if target is None or isinstance(target, (str, os.PathLike)):
        return Path(target) if target is not None else None
    local = target.local_path("config.json")
    return Path(local).parent if local is not None else None


def run_smoke(path_or_checkpoint: Any, *, target: Any = None,
              hidden_states: str | os.PathLike[str] | None = None, block_size: int | None = None,
              seed: int = 0, device: str | None = None) -> SmokeReport:
    """Run the drafter once on smoke inputs and cross-check it (findings DF7xx).

    path_or_checkpoint: a checkpoint directory, a Source, or an opened Checkpoint.
    target: the target model's directory, or an opened Source (see _target_dir).
    Raises MissingDependencyError without torch/triton, ConfigError when the config does not parse
    into a drafter (verify says why), SourceError when the files cannot be read.
    """
    ckpt = open_for_smoke(path_or_checkpoint)
    from .runner import smoke

    report = smoke(ckpt.spec, _tensor_files(ckpt), label=ckpt.source.label,
                   target=_target_dir(target),
                   hidden_states=Path(hidden_states) if hidden_states is not None else None,
                   block_size=block_size, seed=seed, device=device)
    return report
