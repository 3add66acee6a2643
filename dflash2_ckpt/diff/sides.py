"""One side of a diff: a checkpoint read tensor by tensor, row range by row range, as dense float32.

A Side names its logical tensors (quantized modules under their dense name) and yields any row range
of any of them, so memory stays bounded by one chunk whatever the checkpoint size. The safetensors
side reads byte ranges through the checkpoint's Source (local file or Hub). Other formats plug in with
`register_opener`: an opener takes the path and returns a Side, or None when the path is not its
format (the GGUF reader registers one).
"""

from __future__ import annotations

import functools
import io
import math
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from ..checkpoint import open_checkpoint
from ..checkpoint.layout import role_of
from ..errors import ConfigError, SourceError
from ..sources import Source
from ..sources.safetensors_header import DTYPE_BITS, TensorInfo

if TYPE_CHECKING:  # torch loads only for a tensor that needs float work (identical.py needs none)
    import torch


@functools.cache
def torch_dtypes() -> tuple[dict[str, Any], dict[str, Any]]:
    """(safetensors dtype -> torch dtype, unsigned dtypes -> the signed ones read as bit patterns)."""
    import torch  # heavy: torch loads only when this runs

    dtypes = {
        "F32": torch.float32,
        "F16": torch.float16,
        "BF16": torch.bfloat16,
        "F64": torch.float64,
        "I64": torch.int64,
        "I32": torch.int32,
        "I16": torch.int16,
        "I8": torch.int8,
        "U8": torch.uint8,
        "BOOL": torch.bool,
        "F8_E4M3": torch.float8_e4m3fn,
        "F8_E5M2": torch.float8_e5m2,
        "U32": torch.uint32,
        "U16": torch.uint16,
        "U64": torch.uint64,
    }
    bits = {"U32": torch.int32, "U16": torch.int16, "U64": torch.int64}  # bit patterns; arithmetic masks them
    return dtypes, bits


CHUNK_BYTES = 8 << 20  # raw bytes per side per step: bounds peak memory (float32 copies are 2-8x)


@dataclass(frozen=True)
class TensorMeta:
    name: str  # logical (dense, canonical) name
    shape: tuple[int, ...]  # logical shape
    dtype: str  # stored dtype of the main tensor
    scheme: str | None  # scheme label, None for a dense tensor
    row_bytes: int  # stored bytes per row, for chunking


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


# quant findings after which the library cannot decompress the side
_UNREADABLE = frozenset({"DF222", "DF223", "DF227", "DF229", "DF234"})


def _rows_of(shape: tuple[int, ...]) -> tuple[int, int]:
    if not shape:
        return 1, 1
    return shape[0], math.prod(shape[1:])


class SafetensorsSide:
    def __init__(self, path: str | os.PathLike[str] | Source) -> None:
        self.ckpt = open_checkpoint(path)
        self.label = self.ckpt.label
        self.view = self.ckpt.quant
        self._refuse_unreadable_quant()
        raw = self.ckpt.config or {}
        self.raw_quant = raw.get("quantization_config") or {}
        self._meta: dict[str, TensorMeta] = {}
        self._handles: dict[
            str, io.BufferedReader | None
        ] = {}  # open local files (None: read through the source)
        self._pool: dict[str, Any] = {}  # numpy read buffers by tensor role
        self._dense: dict[str, TensorInfo] = {}
        self._quant: dict[str, str] = {}  # logical name -> module
        for name, t in self.view.logical.items():
            canon = role_of(name).canonical  # both sides compared under the names the engines load
            mod = next((m for m in self.view.modules.values() if m.weight == name), None)
            if mod is not None and mod.scheme is not None and mod.logical is not None:
                rows, cols = _rows_of(mod.logical)
                stored = self.ckpt.tensors[mod.tensors[0]]
                self._meta[canon] = TensorMeta(
                    canon,
                    mod.logical,
                    stored.dtype,
                    mod.label,
                    max(1, sum(self.ckpt.tensors[n].nbytes for n in mod.tensors) // rows),
                )
                self._quant[canon] = mod.module
            elif t.name in self.ckpt.tensors:
                rows, cols = _rows_of(t.shape)
                self._meta[canon] = TensorMeta(
                    canon, t.shape, t.dtype, None, max(1, t.nbytes // max(rows, 1))
                )
                self._dense[canon] = t

    def _refuse_unreadable_quant(self) -> None:
        """A quantized side whose config or tensors the library cannot decompress (a missing zero point,
        a malformed config) is refused up front with verify's findings, not halfway through."""
        if not self.view.modules and self.view.config is None and not self.view.config_error:
            return
        from ..checks.quant import quant_findings  # lazy: checks.quant loads only on this path

        bad = [f for f in quant_findings(self.ckpt) if f.code in _UNREADABLE and f.severity == "error"]
        if bad:
            listed = "; ".join(f"{f.code} {f.message}" for f in bad[:3])
            raise ConfigError(
                f"cannot dequantize: {listed}{f' (and {len(bad) - 3} more)' if len(bad) > 3 else ''}",
                path=self.label,
                hint=f"run `dflash2-ckpt verify {self.label}`",
            )

    def tensors(self) -> dict[str, TensorMeta]:
        return self._meta

    def _file(self, file: str) -> io.BufferedReader | None:
        f = self._handles.get(file)
        if f is None and file not in self._handles:
            path = self.ckpt.source.local_path(file)
            f = open(path, "rb") if path is not None and path.is_file() else None  # noqa: SIM115 (close())
            self._handles[file] = f
        return f

    def is_local(self, file: str) -> bool:
        """The file is read from disk (not through the source's ranged reads)."""
        return self._file(file) is not None

    def dense_info(self, name: str) -> TensorInfo | None:
        """Where a dense tensor's bytes are stored (None when the tensor is quantized)."""
        return self._dense.get(name)

    def read_into(self, file: str, start: int, buf: bytearray) -> bytes | bytearray:
        """len(buf) bytes of `file` from `start`: read into `buf` from a local file (one copy out of the page
        cache), through the source's read_range otherwise (the Hub)."""
        f = self._file(file)
        if f is None:
            data = self.ckpt.source.read_range(file, start, len(buf))
            if len(data) != len(buf):
                raise SourceError(f"{file} ended early at byte {start + len(data)}", path=self.label)
            return data
        f.seek(start)
        got = f.readinto(buf)
        if got != len(buf):
            raise SourceError(f"{file} ended early at byte {start + (got or 0)}", path=self.label)
        return buf

    def _bytes_np(self, file: str, start: int, length: int, slot: str) -> Any:
        """`length` bytes of `file` as a numpy uint8 array: read straight into a buffer kept for `slot` (the
        stored tensor's role: weight, weight_scale, ...) from a local file, so a step costs one copy out of
        the page cache and no fresh pages; through the source's read_range otherwise (the Hub). The buffer
        is overwritten by the next read of the same slot: callers finish with the rows before that."""
        import numpy as np  # heavy: numpy loads only when this runs

        f = self._file(file)
        if f is None:
            data = self.ckpt.source.read_range(file, start, length)
            return np.frombuffer(bytearray(data), np.uint8) if data else np.empty(0, np.uint8)
        buf = self._pool.get(slot)
        if buf is None or buf.size < length:
            buf = self._pool[slot] = np.empty(length, np.uint8)
        out = buf[:length]
        f.seek(start)
        got = f.readinto(out.data)
        if got != length:
            raise SourceError(f"{file} ended early at byte {start + (got or 0)}", path=self.label)
        return out

    def _range(self, name: str, r0: int, r1: int) -> tuple[Any, int, int]:
        """(stored bytes of rows r0:r1 of a stored tensor as numpy uint8, rows read, columns)."""
        t = self.ckpt.tensors[name]
        rows, cols = _rows_of(t.shape)
        r1 = min(r1, rows)
        row_bytes = cols * DTYPE_BITS[t.dtype] // 8
        return (
            self._bytes_np(t.file, t.begin + r0 * row_bytes, (r1 - r0) * row_bytes, name.rpartition(".")[2]),
            max(0, r1 - r0),
            cols,
        )

    def read_np(self, name: str, r0: int, r1: int) -> Any:
        """Stored rows r0:r1 of a stored tensor as a numpy array (BF16 as its uint16 bit patterns)."""
        from .np_figures import NP_DTYPES  # lazy: diff.np_figures loads only on this path

        data, n, cols = self._range(name, r0, r1)
        return data.view(NP_DTYPES[self.ckpt.tensors[name].dtype]).reshape(n, cols)

    def stored_dtype(self, name: str) -> str:
        return self.ckpt.tensors[name].dtype

    def numpy_rows(self, name: str) -> bool:
        """rows_np can give this tensor's rows: a dense F32 / F16 / BF16 tensor, or a pack-quantized one of
        the layouts np_figures decodes."""
        from . import np_figures  # lazy: diff.np_figures loads only on this path

        if name in self._dense:
            return self._dense[name].dtype in np_figures.DENSE
        mod = self.view.modules[self._quant[name]]
        if mod.scheme is None or mod.logical is None or mod.scheme.family != "ct-pack":
            return False
        scale = self.ckpt.tensors.get(f"{mod.module}.weight_scale")
        packed = self.ckpt.tensors.get(f"{mod.module}.weight_packed")
        return (
            scale is not None
            and packed is not None
            and packed.dtype == "I32"
            and np_figures.supported(mod.scheme, mod.logical[-1], scale.dtype, scale.shape)
        )

    def stored_rows_np(self, name: str, r0: int, r1: int) -> Any:
        """The stored rows of a dense tensor as numpy (not widened)."""
        return self.read_np(self._dense[name].name, r0, r1)

    def rows_np(self, name: str, r0: int, r1: int) -> tuple[Any, float]:
        """rows() in numpy, for a tensor numpy_rows accepts (pack-quantized: dense tensors go through
        stored_rows_np and are widened slice by slice)."""
        from . import np_figures  # lazy: diff.np_figures loads only on this path

        mod = self.view.modules[self._quant[name]]
        assert mod.scheme is not None and mod.logical is not None
        try:
            return np_figures.dequantize_rows(
                mod.scheme, mod.module, self.read_np, self.stored_dtype, mod.logical, r0, r1
            )
        except (KeyError, ValueError, TypeError) as e:
            raise SourceError(
                f"cannot dequantize {mod.module} ({mod.label}): {type(e).__name__}: {e}",
                path=self.label,
                tensor=name,
            ) from None

    def _read(self, name: str, r0: int, r1: int) -> torch.Tensor:
        """Stored rows r0:r1 of a stored tensor, in its stored dtype (one bounded byte-range read)."""
        import torch  # heavy: torch loads only when this runs

        data, n, cols = self._range(name, r0, r1)
        dtypes, bits = torch_dtypes()
        dtype = bits.get(self.ckpt.tensors[name].dtype, dtypes[self.ckpt.tensors[name].dtype])
        if not data.size:
            return torch.empty((0, cols), dtype=dtype)
        return torch.from_numpy(data).view(dtype).reshape(n, cols)

    def close(self) -> None:
        """Close the files the comparison opened (the receipt reads through the source)."""
        for f in self._handles.values():
            if f is not None:
                f.close()
        self._handles.clear()
        self._pool.clear()

    def stored_rows(self, name: str, r0: int, r1: int) -> torch.Tensor | None:
        """The stored rows of a dense tensor, not widened (diff widens them slice by slice); None when quantized."""
        t = self._dense.get(name)
        return self._read(t.name, r0, r1) if t is not None else None

    def rows(self, name: str, r0: int, r1: int) -> tuple[torch.Tensor, float]:
        if name in self._dense:
            return self._read(self._dense[name].name, r0, r1).float(), 0.0
        mod = self.view.modules[self._quant[name]]
        assert self.view.config is not None and mod.scheme is not None and mod.logical is not None
        from .dequant import dequantize_rows  # lazy: diff.dequant loads only on this path

        try:
            return dequantize_rows(
                mod.scheme, self.view.config, self.raw_quant, mod.module, self._read, mod.logical, r0, r1
            )
        except (KeyError, ValueError, TypeError) as e:  # the library's validation errors are ValueErrors
            raise SourceError(
                f"cannot dequantize {mod.module} ({mod.label}): {type(e).__name__}: {e}",
                path=self.label,
                tensor=name,
            ) from None

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


Opener = Callable[[str | os.PathLike[str] | Source], "Side | None"]
_OPENERS: list[Opener] = []


def register_opener(opener: Opener) -> None:
    """Plug in another format (e.g. GGUF) for either side; tried before safetensors."""
    _OPENERS.insert(0, opener)


def open_side(path: str | os.PathLike[str] | Source) -> Side:
    """A path or an opened source (the command line passes sources): each opener decides by the format."""
    for opener in _OPENERS:
        side = opener(path)
        if side is not None:
            return side
    return SafetensorsSide(path)
