"""A GGUF file as one side of a diff: its tensors under their HF names, dequantized by the gguf package.

GGML block formats are dequantized a whole tensor at a time (gguf's `dequantize` works on whole
blocks; one drafter tensor is at most a few hundred MB as float32), and the last tensor is kept so
that the row chunks of one tensor cost one read. The predicted rounding noise of a quantized type is
step^2/12 per element, with the step taken per quantization block from the dequantized values'
range over 2^bits - 1 levels (bits from the type's stored size): the same model the safetensors
schemes use, read off the data because GGML keeps its scales inside the blocks.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

import numpy as np
from gguf.constants import GGML_QUANT_SIZES, GGMLQuantizationType

from ..checkpoint import gguf_file, open_checkpoint
from ..sources import Source
from ..sources.dense import to_float32
from .sides import SafetensorsSide, TensorMeta

if TYPE_CHECKING:
    import torch

    from ..sources.safetensors_header import TensorInfo

_DENSE = {"F32", "F16", "BF16", "F64"}


def _block_noise(values: np.ndarray[Any, Any], type_name: str) -> float:
    """Predicted sum of squared rounding errors of a GGML-quantized tensor (0 for a dense type)."""
    if type_name in _DENSE:
        return 0.0

    block, size = GGML_QUANT_SIZES[GGMLQuantizationType[type_name]]
    bits = max(1, int(size * 8 // block) - 1)  # the stored bits per weight, less the per-block scales'
    flat = values.reshape(-1)
    n = flat.size - flat.size % block
    blocks = flat[:n].reshape(-1, block)
    step = (blocks.max(axis=1) - blocks.min(axis=1)) / float(2**bits - 1)
    return float(np.sum(step.astype(np.float64) ** 2) * block / 12.0)


class GGUFSide(SafetensorsSide):
    """Reuses the safetensors side's file hashing and receipt; tensors come from the GGUF header."""

    def __init__(self, path: str | os.PathLike[str] | Source) -> None:
        self.ckpt = open_checkpoint(path)
        self.label = self.ckpt.label
        self._meta: dict[str, TensorMeta] = {}
        for name, t in self.ckpt.tensors.items():
            rows = t.shape[0] if t.shape else 1
            scheme = None if t.dtype in _DENSE else t.dtype.lower()
            self._meta[name] = TensorMeta(
                name, tuple(t.shape), t.dtype, scheme, max(1, t.nbytes // max(rows, 1))
            )
        self._cached: tuple[str, np.ndarray[Any, Any], float] | None = None

    def _whole(self, name: str) -> tuple[np.ndarray[Any, Any], float]:
        if self._cached is None or self._cached[0] != name:
            t = self.ckpt.tensors[name]
            raw = self.ckpt.source.read_range(t.file, t.begin, t.nbytes)
            values = to_float32(raw, t.dtype, tuple(t.shape))
            self._cached = (name, values, _block_noise(values, t.dtype))
        return self._cached[1], self._cached[2]

    def stored_rows(self, name: str, r0: int, r1: int) -> torch.Tensor | None:
        return None  # GGML blocks are dequantized whole (rows)

    def dense_info(self, name: str) -> TensorInfo | None:
        return None  # compared as float32 values (rows), never byte for byte

    def close(self) -> None:
        self._cached = None

    def rows(self, name: str, r0: int, r1: int) -> tuple[torch.Tensor, float]:
        values, noise = self._whole(name)
        flat = values.reshape(values.shape[0] if values.ndim else 1, -1)
        part = flat[r0 : min(r1, flat.shape[0])]
        share = noise * part.shape[0] / max(flat.shape[0], 1)  # the noise of these rows
        import torch  # heavy: torch loads only when this runs

        return torch.from_numpy(np.ascontiguousarray(part, dtype=np.float32)), share


def open_gguf(path: str | os.PathLike[str] | Source) -> GGUFSide | None:
    """The diff opener for GGUF: a `.gguf` path, or a source (local, Hub) whose checkpoint is a GGUF file,
    as the command line opens it (None for anything else, which falls through)."""
    if isinstance(path, (str, os.PathLike)):
        return GGUFSide(path) if str(path).endswith(".gguf") and os.path.isfile(path) else None
    return GGUFSide(path) if gguf_file(path, path.list_files()) is not None else None
