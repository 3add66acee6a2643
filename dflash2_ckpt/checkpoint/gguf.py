"""Open a GGUF drafter as a Checkpoint: header only, tensors under their HF names, the "gguf" DraftSpec.

Every check written for the HF dialects then runs unchanged; the GGUF-only rules are in checks/gguf.py.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..errors import HeaderError
from ..findings import Finding
from ..formats.detect import Detection
from ..formats.gguf_names import gguf_to_hf
from ..formats.gguf_spec import read_spec
from ..sources.gguf_header import GGUFHeader, LazyArray, parse_gguf_header
from ..sources.safetensors_header import TensorInfo

if TYPE_CHECKING:
    from .model import Checkpoint

EMITS: frozenset[str] = frozenset({"DF900"})


def read_gguf(ckpt: Checkpoint, name: str) -> GGUFHeader:
    """The header of `name`, every byte read counted in ckpt.bytes_read; raises HeaderError."""
    return parse_gguf_header(
        lambda start, n: ckpt.read_counted(name, start, n), ckpt.source.file_size(name), name
    )


def scalar_metadata(header: GGUFHeader) -> dict[str, Any]:
    """The metadata without its arrays (the vocabulary alone is hundreds of thousands of entries)."""
    return {k: kv.value for k, kv in header.kv.items() if not isinstance(kv.value, (list, LazyArray))}


def hf_tensors(header: GGUFHeader) -> dict[str, TensorInfo]:
    """Tensor infos under their HF names (unknown GGUF names kept as they are), HF shapes."""
    out = {}
    reduced = any(t.name == "d2t" for t in header.tensors)
    for t in header.tensors:
        # with d2t, output.weight is the drafter's own head over its draft vocabulary (lm_head in HF)
        name = "lm_head.weight" if reduced and t.name == "output.weight" else gguf_to_hf(t.name) or t.name
        out[name] = TensorInfo(name, t.type_name, t.shape, t.begin, t.end, header.file)
    return out


def open_gguf(ckpt: Checkpoint, name: str) -> None:
    """Fill a fresh Checkpoint (open_checkpoint made it) from the GGUF file `name` of its source."""
    try:
        header = read_gguf(ckpt, name)
    except HeaderError as e:
        where = f" (byte {e.offset})" if e.offset else ""
        ckpt.file_findings.append(
            Finding(
                "DF900",
                f"{name}: {e.message}{where}",
                file=name,
                details={"offset": e.offset, "hint": e.hint or "re-export the GGUF file"},
            )
        )
        ckpt.detection = Detection("gguf", None)
        return
    ckpt.gguf = header
    read = read_spec(header)
    ckpt.detection = Detection("gguf", "v2" if read.version == "v2" else "v1")
    ckpt.config = scalar_metadata(header)
    ckpt.spec = read.spec  # the config family runs the cross-field rules on it
    ckpt.tensors = hf_tensors(header)


def gguf_summary(header: GGUFHeader) -> dict[str, Any]:
    """What `inspect` adds for a GGUF file: the file, its architecture and every tensor's type."""
    types: dict[str, int] = {}
    for t in header.tensors:
        types[t.type_name] = types.get(t.type_name, 0) + t.nbytes
    return {
        "files": [header.file],
        "data_bytes": sum(t.nbytes for t in header.tensors),
        "gguf": {
            "version": header.version,
            "architecture": header.get("general.architecture"),
            "file_type": header.get("general.file_type"),
            "header_bytes": header.header_bytes,
            "alignment": header.alignment,
            "keys": len(header.kv),
            "bytes_by_type": types,
        },
        "tensor_types": [
            {
                "tensor": t.name,
                "hf": gguf_to_hf(t.name),
                "type": t.type_name,
                "shape": list(t.shape),
                "bytes": t.nbytes,
            }
            for t in header.tensors
        ],
    }
