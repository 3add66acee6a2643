"""The engine-independent facts of an opened checkpoint that the engine profiles judge (a Drafter)."""
from __future__ import annotations

from typing import Mapping

from .checkpoint import Checkpoint
from .engines import Drafter
from .quant.view import quantized_modules as header_quantized_modules


def drafter_of(ckpt: Checkpoint, *, target: str | None = None,
               quantized_modules: Mapping[str, str] | None = None) -> Drafter:
    det = ckpt.detection
    modules = quantized_modules if quantized_modules is not None else header_quantized_modules(ckpt)
    return Drafter(dialect=det.dialect if det else None, version=det.version if det else None, spec=ckpt.spec,
                   config=ckpt.config or {}, tensors=frozenset(ckpt.tensors), quantized_modules=dict(modules or {}),
                   path=ckpt.label, target=target)
