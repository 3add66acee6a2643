"""Open a checkpoint for a forward: check the extra is installed, parse the drafter, find the tensor files.

Torch-free; kept apart from the package __init__ so the modules that load tensors import it without
importing their own package back.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

from ..errors import ConfigError, MissingDependencyError, SourceError


def require_smoke_deps() -> None:
    missing = [m for m in ("torch", "triton", "numpy") if importlib.util.find_spec(m) is None]
    if missing:
        raise MissingDependencyError(
            f"the smoke forward needs {', '.join(missing)}, which is not installed",
            hint="pip install 'dflash2-ckpt[smoke]'",
        )


def tensor_files(ckpt: Any, tensors: dict[str, Any] | None = None) -> dict[str, Path]:
    """The local file of each tensor (all of the checkpoint's, or the `tensors` given)."""
    files: dict[str, Path] = {}
    for name, info in (ckpt.tensors if tensors is None else tensors).items():
        local = ckpt.source.local_path(info.file)
        if local is None:
            local = ckpt.source.download(info.file)  # a Hub repo: fetch only the weight files, once each
        if local is None:
            raise SourceError(
                f"{info.file} is not available as a local file",
                path=ckpt.source.label,
                hint="download the checkpoint first; the smoke reads tensor data",
            )
        files[name] = Path(local)
    return files


def open_for_smoke(path_or_checkpoint: Any) -> Any:
    """An opened Checkpoint whose config parses into a drafter (a directory, Source or Checkpoint)."""
    require_smoke_deps()
    ckpt = path_or_checkpoint
    if not (hasattr(ckpt, "spec") and hasattr(ckpt, "tensors")):
        from ..checkpoint import open_checkpoint  # lazy: checkpoint loads only on this path

        ckpt = open_checkpoint(path_or_checkpoint)
    if getattr(ckpt, "gguf", None) is not None:
        raise ConfigError(
            "the smoke forward runs on safetensors checkpoints, and this is a GGUF file",
            path=getattr(ckpt.source, "label", None),
            hint="convert it back first: dflash2-ckpt convert FILE.gguf -o DIR --to nested",
        )
    if ckpt.spec is None:
        raise ConfigError(
            "the config does not describe a DFlash drafter the smoke can build",
            path=getattr(ckpt.source, "label", None),
            hint="run `dflash2-ckpt verify` to see why",
        )
    return ckpt
