"""Where the smoke runs, and in which Triton mode.

Triton decides compiled vs interpreted when a kernel (and its own standard library) is decorated,
i.e. at `import triton`. So on a machine without CUDA the interpreter switch must be set before
triton is first imported; if someone imported it earlier in compiled mode, the kernels cannot run
on the CPU and we say so instead of failing inside a launch.
"""

from __future__ import annotations

import os
import sys

import torch

from ..errors import MissingDependencyError


def pick_device(requested: str | None) -> torch.device:
    if requested:
        dev = torch.device(requested)
        if dev.type == "cuda" and not torch.cuda.is_available():
            raise MissingDependencyError(
                f"device {requested!r} requested but CUDA is not available",
                hint="drop --device to run on the CPU under TRITON_INTERPRET=1",
            )
        return dev
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")


def prepare_triton(device: torch.device) -> str:
    """Set up Triton for `device`; returns "compiled" or "interpret"."""
    if device.type != "cuda" and "triton" not in sys.modules:
        os.environ["TRITON_INTERPRET"] = "1"
    try:
        import triton  # noqa: F401
    except ImportError as e:  # pragma: no cover - exercised only without the extra
        raise MissingDependencyError(
            f"the smoke forward needs triton ({e})", hint="pip install 'dflash2-ckpt[smoke]'"
        ) from None
    interpret = interpreting()
    if device.type != "cuda" and not interpret:
        raise MissingDependencyError(
            "Triton was imported in compiled mode before the smoke ran, so its kernels cannot run on the CPU",
            hint="set TRITON_INTERPRET=1 before importing triton, or run on a CUDA device",
        )
    return "interpret" if interpret else "compiled"


def interpreting() -> bool:
    """Whether Triton kernels run in the interpreter (triton.knobs from 3.3; the env var before)."""
    try:
        from triton import knobs  # optional extra: triton, ImportError answered below
    except ImportError:  # pragma: no cover - older triton
        return os.environ.get("TRITON_INTERPRET", "0").lower() in ("1", "true", "on", "yes")
    return bool(knobs.runtime.interpret)


def sync(device: torch.device) -> None:
    """Make stage timings honest on an asynchronous device."""
    if device.type == "cuda":
        torch.cuda.synchronize(device)
