"""Write safetensors checkpoints from a tensor list: real headers with zero (sparse) data, or given bytes.

Used by the fixture script, the tests and the benchmarks to materialise real-shape checkpoints
(e.g. the 3.85 GB Qwen3.8-27B-DFlash2 layout) without the disk space: the data region is a hole.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from ..sources.safetensors_header import build_header

TensorSpec = tuple[str, str, tuple[int, ...]]


def read_tensor_list(path: str | os.PathLike[str]) -> list[TensorSpec]:
    """A `name<TAB>dtype<TAB>[shape]` list as in shared/real/*.tensors.tsv (comment lines start with #)."""
    out = []
    for line in Path(path).read_text().splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        name, dtype, shape = line.split("\t")[:3]
        dims = tuple(int(d) for d in re.findall(r"\d+", shape))
        out.append((name, dtype, dims))
    return out


def write_safetensors(
    path: str | os.PathLike[str],
    tensors: Sequence[TensorSpec],
    data: Callable[[str, int], bytes] | None = None,
    metadata: Mapping[str, str] | None = None,
) -> int:
    """Write one file; `data(name, nbytes)` gives each tensor's bytes, or the data is left sparse (zeros)."""
    header, spans = build_header(list(tensors), metadata)
    total = len(header) + (spans[-1][1] if spans else 0)
    with open(path, "wb") as f:
        f.write(header)
        if data is None:
            f.truncate(total)
        else:
            for (name, _, _), (b, e) in zip(tensors, spans):
                chunk = data(name, e - b)
                if len(chunk) != e - b:
                    raise ValueError(f"{name}: got {len(chunk)} bytes, need {e - b}")
                f.write(chunk)
    return total


def write_config(directory: str | os.PathLike[str], config: Mapping[str, Any]) -> None:
    Path(directory, "config.json").write_text(json.dumps(config, indent=2) + "\n")


def write_sharded(
    directory: str | os.PathLike[str],
    tensors: Sequence[TensorSpec],
    shards: int,
    data: Callable[[str, int], bytes] | None = None,
) -> None:
    """Split tensors over `shards` files in order, with a model.safetensors.index.json."""
    d = Path(directory)
    per = -(-len(tensors) // shards)
    weight_map: dict[str, str] = {}
    total = 0
    for i in range(shards):
        part = tensors[i * per : (i + 1) * per]
        name = f"model-{i + 1:05d}-of-{shards:05d}.safetensors"
        total += write_safetensors(d / name, part, data)
        weight_map.update({t[0]: name for t in part})
    index = {"metadata": {"total_size": total}, "weight_map": weight_map}
    (d / "model.safetensors.index.json").write_text(json.dumps(index, indent=2) + "\n")


def materialise(
    directory: str | os.PathLike[str],
    config: Mapping[str, Any],
    tensors: Iterable[TensorSpec],
    *,
    shards: int = 1,
    data: Callable[[str, int], bytes] | None = None,
) -> Path:
    d = Path(directory)
    d.mkdir(parents=True, exist_ok=True)
    write_config(d, config)
    tensors = list(tensors)
    if shards == 1:
        write_safetensors(d / "model.safetensors", tensors, data)
    else:
        write_sharded(d, tensors, shards, data)
    return d
