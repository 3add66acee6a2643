"""An opened checkpoint as the engines judge it: the one constructor of a Drafter from a checkpoint (a
conversion's output drafter is Drafter.converted, engines/profile.py)."""

from __future__ import annotations

from collections.abc import Mapping

from ..engines import Drafter
from ..errors import SourceError
from .model import Checkpoint
from .quant import quantized_modules as header_quantized_modules


def drafter_of(
    ckpt: Checkpoint, *, target: str | None = None, quantized_modules: Mapping[str, str] | None = None
) -> Drafter:
    """`quantized_modules`: None reads them from the headers (compressed-tensors config, tensor suffixes)."""
    det = ckpt.detection
    modules = quantized_modules if quantized_modules is not None else header_quantized_modules(ckpt)
    return Drafter(
        dialect=det.dialect if det else None,
        version=det.version if det else None,
        spec=ckpt.spec,
        config=ckpt.config or {},
        tensors=frozenset(ckpt.tensors),
        quantized_modules=dict(modules or {}),
        path=ckpt.label,
        target=target,
        files=listed_files(ckpt),
    )


def listed_files(ckpt: Checkpoint) -> frozenset[str]:
    """The checkpoint's files (the engines' sidecar rules read them); none where the source cannot list."""
    try:
        return frozenset(ckpt.source.list_files())
    except SourceError:
        return frozenset()
