"""Smoke forward: prove a drafter's tensors actually draft (the `[smoke]` extra: torch, triton).

Importing this package is free; torch and triton load only when `run_smoke` runs, so the
header-level toolkit never pays for them.
"""
from __future__ import annotations

import importlib.util
import os
from pathlib import Path
from typing import Any

from ..errors import ConfigError, MissingDependencyError, SourceError
from .report import SmokeReport

__all__ = ["SmokeReport", "require_smoke_deps", "run_smoke", "draft", "load_drafter", "open_for_smoke"]


def require_smoke_deps() -> None:
    missing = [m for m in ("torch", "triton", "numpy") if importlib.util.find_spec(m) is None]
    if missing:
        raise MissingDependencyError(f"the smoke forward needs {', '.join(missing)}, which is not installed",
                                     hint="pip install 'dflash2-ckpt[smoke]'")


def _tensor_files(ckpt: Any) -> dict[str, Path]:
    files: dict[str, Path] = {}
    for name, info in ckpt.tensors.items():
        local = ckpt.source.local_path(info.file)
        if local is None and hasattr(ckpt.source, "download"):
            local = ckpt.source.download(info.file)   # a Hub repo: fetch only the weight files, once each
        if local is None:
            raise SourceError(f"{info.file} is not available as a local file", path=ckpt.source.label,
                              hint="download the checkpoint first; the smoke reads tensor data")
        files[name] = Path(local)
    return files


def open_for_smoke(path_or_checkpoint: Any) -> Any:
    """An opened Checkpoint whose config parses into a drafter (a directory, Source or Checkpoint)."""
    require_smoke_deps()
    ckpt = path_or_checkpoint
    if not (hasattr(ckpt, "spec") and hasattr(ckpt, "tensors")):
        from ..checkpoint import open_checkpoint
        ckpt = open_checkpoint(path_or_checkpoint)
    if ckpt.spec is None:
        raise ConfigError("the config does not describe a DFlash drafter the smoke can build",
                          path=getattr(ckpt.source, "label", None), hint="run `dflash2-ckpt verify` to see why")
    return ckpt


def draft(checkpoint: Any, hidden_states: Any, anchors: Any, **options: Any) -> Any:
    """Draft one block per request and return every stage (smoke.drafting.DraftResult); torch loads here."""
    from .drafting import draft as _draft
    return _draft(checkpoint, hidden_states, anchors, **options)


def load_drafter(checkpoint: Any, **options: Any) -> Any:
    """Load a drafter once for repeated drafting (smoke.drafting.Drafter); torch loads here."""
    from .drafting import load_drafter as _load
    return _load(checkpoint, **options)


def run_smoke(path_or_checkpoint: Any, *, target: str | os.PathLike[str] | None = None,
              hidden_states: str | os.PathLike[str] | None = None, block_size: int | None = None,
              seed: int = 0, device: str | None = None) -> SmokeReport:
    """Run the drafter once on smoke inputs and cross-check it (findings DF7xx).

    path_or_checkpoint: a checkpoint directory, a Source, or an opened Checkpoint.
    Raises MissingDependencyError without torch/triton, ConfigError when the config does not parse
    into a drafter (verify says why), SourceError when the files cannot be read.
    """
    ckpt = open_for_smoke(path_or_checkpoint)
    from .runner import smoke

    report = smoke(ckpt.spec, _tensor_files(ckpt), label=ckpt.source.label,
                   target=Path(target) if target is not None else None,
                   hidden_states=Path(hidden_states) if hidden_states is not None else None,
                   block_size=block_size, seed=seed, device=device)
    return report
