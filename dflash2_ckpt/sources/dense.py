"""One tensor as a dense float32 array, from safetensors or GGUF bytes (quantized GGUF types dequantized
by the gguf package). Used by convert for type changes and by `diff` to compare either side.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gguf.quants import dequantize, quantize

from gguf import GGMLQuantizationType

from ..errors import ConversionError
from .gguf_header import GGUFHeader, GGUFTensor

_FLOATS = {"F32": np.float32, "F16": np.float16, "F64": np.float64}


def to_float32(raw: bytes, dtype: str, shape: tuple[int, ...]) -> np.ndarray[Any, Any]:
    """Bytes of a tensor stored as `dtype` (BF16 / F16 / F32 / F64 or any ggml type name) in HF `shape`."""
    if dtype == "BF16":
        u = np.frombuffer(raw, dtype=np.uint16).astype(np.uint32) << 16
        return u.view(np.float32).reshape(shape)
    if dtype in _FLOATS:
        return np.frombuffer(raw, dtype=_FLOATS[dtype]).astype(np.float32).reshape(shape)
    try:
        qtype = GGMLQuantizationType[dtype]
    except KeyError:
        raise ConversionError(f"cannot read a {dtype} tensor as floating point") from None
    rows = (
        np.frombuffer(raw, dtype=np.uint8).reshape(*shape[:-1], -1) if shape else np.frombuffer(raw, np.uint8)
    )
    try:
        return np.asarray(dequantize(rows, qtype), dtype=np.float32).reshape(shape)
    except (NotImplementedError, ValueError) as e:
        raise ConversionError(
            f"the gguf package cannot dequantize {dtype}: {e}",
            hint="requantize the file to Q8_0 or a K-quant with llama-quantize first",
        ) from None


def from_float32(a: np.ndarray[Any, Any], dtype: str) -> bytes:
    """float32 values stored as `dtype` (BF16 rounds to nearest even, as torch does; Q8_0 via the gguf package)."""
    a = np.ascontiguousarray(a, dtype=np.float32)
    if dtype == "BF16":
        u = a.view(np.uint32)
        rounded = (u + 0x7FFF + ((u >> 16) & 1)) >> 16
        nan = np.isnan(a)
        out = np.where(nan, (u >> 16) | 0x40, rounded).astype(np.uint16)
        return out.tobytes()
    if dtype in _FLOATS:
        return a.astype(_FLOATS[dtype]).tobytes()

    return bytes(np.asarray(quantize(a, GGMLQuantizationType[dtype])).tobytes())


def read_gguf_tensor(source: Any, header: GGUFHeader, tensor: GGUFTensor | str) -> np.ndarray[Any, Any]:
    """A GGUF tensor (by GGUF name or info) as dense float32 in its HF shape, read through a Source."""
    if isinstance(tensor, str):
        found = {t.name: t for t in header.tensors}.get(tensor)
        if found is None:
            raise ConversionError(f"{header.file} has no tensor {tensor}")
        tensor = found
    raw = source.read_range(header.file, tensor.begin, tensor.nbytes)
    if len(raw) != tensor.nbytes:
        raise ConversionError(f"{header.file}: {tensor.name} is truncated")
    return to_float32(raw, tensor.type_name, tensor.shape)


def read_checkpoint_tensor(ckpt: Any, name: str) -> np.ndarray[Any, Any]:
    """A tensor of any opened checkpoint (safetensors or GGUF) by its HF name, as dense float32 in the HF
    shape: what `diff` needs to compare either kind of file with the other."""
    t = ckpt.tensors.get(name)
    if t is None:
        raise ConversionError(f"{ckpt.label} has no tensor {name}")
    raw = ckpt.source.read_range(t.file, t.begin, t.nbytes)
    if len(raw) != t.nbytes:
        raise ConversionError(f"{t.file}: {name} is truncated")
    return to_float32(raw, t.dtype, t.shape)
