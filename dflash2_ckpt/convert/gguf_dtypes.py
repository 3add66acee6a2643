"""The source dtypes a GGUF drafter was written from, so that converting it back restores them.

llama.cpp's converter keeps vectors (norms, conv base kernels) in F32 whatever --outtype says, and
--outtype may cast a whole drafter; the values are then the source's (widened) or a rounding of them,
but the dtype is not. `convert --to gguf` records, for every tensor whose GGUF type differs from its
source dtype, that dtype under our own metadata key (llama.cpp tolerates it: ggml/src/gguf.cpp reads
every key/value whatever its name, `for (int64_t i = 0; ok && i < n_kv; ++i)`, and the loader asks
for the keys it knows by name, `gguf_find_key(metadata, key.c_str())` in src/llama-model-loader.cpp,
llama.cpp b11434). Converting back stores such a tensor in its source dtype again when every value
the GGUF holds is exactly representable there (always so for F32; checked value by value for BF16 and
F16), else keeps the GGUF's type and says so.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

import numpy as np

from ..formats import gguf_names as N

DENSE = ("F32", "F16", "BF16")
_MAX_RECORD = 1 << 20  # bytes of the recorded JSON: a few dozen bytes per tensor, far below


def record(pairs: Iterable[tuple[str, str, str]]) -> str | None:
    """JSON {gguf name: source dtype} for the (gguf name, source dtype, GGUF type) triples that differ;
    None when every tensor keeps its source dtype (nothing to record)."""
    diff = {name: src for name, src, out in pairs if src != out}
    return json.dumps(diff, separators=(",", ":")) if diff else None


def recorded(raw: Any, notes: list[str]) -> dict[str, str]:
    """The recorded source dtypes, when the key holds what record() writes; anything else is ignored
    with a note (the tensors then keep the GGUF's types)."""
    if raw is None:
        return {}
    got: Any = None
    if isinstance(raw, str) and len(raw) <= _MAX_RECORD and raw.lstrip().startswith("{"):
        try:
            got = json.loads(raw)
        except (ValueError, RecursionError):
            got = None
    if isinstance(got, dict) and all(isinstance(k, str) and v in DENSE for k, v in got.items()):
        return got
    notes.append(
        f"{N.KEY_SOURCE_DTYPES} is not a JSON object of BF16 / F16 / F32; the tensors keep the GGUF's types"
    )
    return {}


def narrow(values: np.ndarray[Any, Any], dtype: str) -> bytes | None:
    """float32 values stored as `dtype` when every one of them is exactly representable there (bit for
    bit, NaN payloads included), else None."""
    a = np.ascontiguousarray(values, dtype=np.float32)
    if dtype == "F32":
        return a.tobytes()
    u = a.view(np.uint32)
    if dtype == "BF16":
        # exact iff the low 16 bits are zero; the high half is then the value itself
        return None if np.any(u & 0xFFFF) else (u >> 16).astype("<u2").tobytes()
    if dtype == "F16":
        with np.errstate(over="ignore", invalid="ignore"):
            h = a.astype("<f2")
        return h.tobytes() if np.array_equal(h.astype(np.float32).view(np.uint32), u) else None
    raise ValueError(f"not a dense dtype: {dtype}")
