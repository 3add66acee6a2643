"""One side of a diff: a checkpoint read tensor by tensor, row range by row range, as dense float32.

A Side names its logical tensors (quantized modules under their dense name) and yields any row range
of any of them, so memory stays bounded by one chunk whatever the checkpoint size. The safetensors
side reads byte ranges through the checkpoint's Source (local file or Hub). Other formats plug in with
`register_opener`: an opener takes the path and returns a Side, or None when the path is not its
format (the GGUF reader registers one).
"""
from __future__ import annotations

import math
import os
from dataclasses import dataclass
from typing import Any, Callable, Iterator, Protocol

import torch

from ..checkpoint import open_checkpoint
from ..checkpoint.layout import role_of
from ..errors import SourceError
from ..sources import Source
from ..sources.safetensors_header import DTYPE_BITS, TensorInfo
from .dequant import dequantize_rows

TORCH_DTYPES: dict[str, torch.dtype] = {
    "F32": torch.float32, "F16": torch.float16, "BF16": torch.bfloat16, "F64": torch.float64,
    "I64": torch.int64, "I32": torch.int32, "I16": torch.int16, "I8": torch.int8, "U8": torch.uint8,
    "BOOL": torch.bool, "F8_E4M3": torch.float8_e4m3fn, "F8_E5M2": torch.float8_e5m2,
    "U32": torch.uint32, "U16": torch.uint16, "U64": torch.uint64,
}
_BIT_DTYPES = {"U32": torch.int32, "U16": torch.int16, "U64": torch.int64}   # bit patterns; arithmetic masks them
CHUNK_BYTES = 8 << 20      # raw bytes per side per step: bounds peak memory (float32 copies are 2-8x)


@dataclass(frozen=True)
class TensorMeta:
    name: str                    # logical (dense, canonical) name
    shape: tuple[int, ...]       # logical shape
    dtype: str                   # stored dtype of the main tensor
    scheme: str | None           # scheme label, None for a dense tensor
    row_bytes: int               # stored bytes per row, for chunking


class Side(Protocol):
    label: str

    def tensors(self) -> dict[str, TensorMeta]:
        """Logical name (as the engines load it) -> its metadata."""
        ...

    def rows(self, name: str, r0: int, r1: int) -> tuple[torch.Tensor, float]:
        """(float32 rows r0:r1 as [r1-r0, cols], predicted squared rounding error over them; 0 when dense)"""
        ...

    def files(self) -> Iterator[tuple[str, Callable[[], Iterator[bytes]]]]:
        """Every file of the side with a reader of its bytes in bounded chunks (for the receipt)."""
        ...

    def receipt_extra(self) -> dict[str, Any]:
        """What the receipt records about the side beyond its files (Hub: repo, revision, commit)."""
        ...


def _rows_of(shape: tuple[int, ...]) -> tuple[int, int]:
    if not shape:
        return 1, 1
    return shape[0], math.prod(shape[1:])


class SafetensorsSide:
    def __init__(self, path: str | os.PathLike[str] | Source) -> None:
        self.ckpt = open_checkpoint(path)
        self.label = self.ckpt.label
        self.view = self.ckpt.quant
        raw = self.ckpt.config or {}
        self.raw_quant = raw.get("quantization_config") or {}
        self._meta: dict[str, TensorMeta] = {}
        self._dense: dict[str, TensorInfo] = {}
        self._quant: dict[str, str] = {}      # logical name -> module
        for name, t in self.view.logical.items():
            canon = role_of(name).canonical          # both sides compared under the names the engines load
            mod = next((m for m in self.view.modules.values() if m.weight == name), None)
            if mod is not None and mod.scheme is not None and mod.logical is not None:
                rows, cols = _rows_of(mod.logical)
                stored = self.ckpt.tensors[mod.tensors[0]]
                self._meta[canon] = TensorMeta(canon, mod.logical, stored.dtype, mod.label,
                                               max(1, sum(self.ckpt.tensors[n].nbytes for n in mod.tensors) // rows))
                self._quant[canon] = mod.module
            elif t.name in self.ckpt.tensors:
                rows, cols = _rows_of(t.shape)
                self._meta[canon] = TensorMeta(canon, t.shape, t.dtype, None, max(1, t.nbytes // max(rows, 1)))
                self._dense[canon] = t

    def tensors(self) -> dict[str, TensorMeta]:
        return self._meta

    def _read(self, name: str, r0: int, r1: int) -> torch.Tensor:
        """Stored rows r0:r1 of a stored tensor, in its stored dtype (one bounded byte-range read)."""
        t = self.ckpt.tensors[name]
        rows, cols = _rows_of(t.shape)
        r1 = min(r1, rows)
        row_bytes = cols * DTYPE_BITS[t.dtype] // 8
        data = self.ckpt.source.read_range(t.file, t.begin + r0 * row_bytes, (r1 - r0) * row_bytes)
        dtype = _BIT_DTYPES.get(t.dtype, TORCH_DTYPES[t.dtype])
        return torch.frombuffer(bytearray(data), dtype=dtype).reshape(r1 - r0, cols) if data else \
            torch.empty((0, cols), dtype=dtype)

    def rows(self, name: str, r0: int, r1: int) -> tuple[torch.Tensor, float]:
        if name in self._dense:
            return self._read(self._dense[name].name, r0, r1).float(), 0.0
        mod = self.view.modules[self._quant[name]]
        assert self.view.config is not None and mod.scheme is not None and mod.logical is not None
        return dequantize_rows(mod.scheme, self.view.config, self.raw_quant, mod.module, self._read,
                               mod.logical, r0, r1)

    def files(self) -> Iterator[tuple[str, Callable[[], Iterator[bytes]]]]:
        src = self.ckpt.source
        for name in src.list_files():
            def chunks(name: str = name) -> Iterator[bytes]:
                size, at = src.file_size(name), 0
                while at < size:
                    data = src.read_range(name, at, min(CHUNK_BYTES, size - at))
                    if not data:
                        raise SourceError(f"{name} ended early at byte {at}", path=self.label)
                    at += len(data)
                    yield data
            yield name, chunks

    def receipt_extra(self) -> dict[str, Any]:
        return dict(getattr(self.ckpt.source, "report_extra", lambda: {})())


Opener = Callable[[str | os.PathLike[str]], "Side | None"]
_OPENERS: list[Opener] = []


def register_opener(opener: Opener) -> None:
    """Plug in another format (e.g. GGUF) for either side; tried before safetensors."""
    _OPENERS.insert(0, opener)


def open_side(path: str | os.PathLike[str] | Source) -> Side:
    if isinstance(path, (str, os.PathLike)):
        for opener in _OPENERS:
            side = opener(path)
            if side is not None:
                return side
    return SafetensorsSide(path)
