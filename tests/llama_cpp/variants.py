"""Variants of a GGUF file, written with the gguf package: keys dropped or set, tensors dropped or added.

Each variant is one thing a converter or a user can get wrong, so the engine's reaction to it can be
recorded (tests/llama_cpp/test_golden_llama_cpp.py).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from gguf import GGUFReader, GGUFValueType, GGUFWriter


def rewrite(
    src: Path,
    dst: Path,
    *,
    drop_keys: Iterable[str] = (),
    set_keys: Mapping[str, tuple[Any, GGUFValueType]] = {},
    drop_tensors: Iterable[str] = (),
    add_tensors: Mapping[str, np.ndarray] = {},
    drop_prefixes: Iterable[str] = (),
) -> Path:
    r = GGUFReader(src)
    arch = str(r.fields["general.architecture"].contents())
    w = GGUFWriter(dst, arch)
    skip = set(drop_keys) | set(set_keys) | {"general.architecture"}
    prefixes = tuple(drop_prefixes)
    for f in r.fields.values():
        if f.name.startswith("GGUF.") or f.name in skip or (prefixes and f.name.startswith(prefixes)):
            continue
        vtype = f.types[0]
        sub = f.types[-1] if vtype == GGUFValueType.ARRAY and len(f.types) > 1 else None
        w.add_key_value(f.name, f.contents(), vtype, sub_type=sub)
    for k, (v, t) in set_keys.items():
        sub = None
        if t == GGUFValueType.ARRAY:
            sub = GGUFValueType.INT32 if all(isinstance(x, int) for x in v) else GGUFValueType.BOOL
        w.add_key_value(k, v, t, sub_type=sub)
    gone = set(drop_tensors)
    for t in r.tensors:
        if t.name in gone or (prefixes and t.name.startswith(prefixes)):
            continue
        w.add_tensor(t.name, np.asarray(t.data), raw_dtype=t.tensor_type)
    for name, arr in add_tensors.items():
        # integer maps (d2t) keep their type; weights are written as F32
        w.add_tensor(name, arr if arr.dtype == np.int64 else arr.astype(np.float32))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return dst
