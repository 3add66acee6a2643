"""Builders for GGUF tests: our converter's output, and rewrites of it with edited metadata or tensors
(written by the gguf package's GGUFWriter, so hostile variants are still well-formed files)."""
from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, Callable

import numpy as np
from gguf import GGMLQuantizationType, GGUFValueType, GGUFWriter

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "convert"))
sys.path.insert(0, str(ROOT / "fixtures"))

from build import tiny_tokenizer  # noqa: E402
from dflash2_ckpt.convert.to_gguf import convert_to_gguf  # noqa: E402
from dflash2_ckpt.sources import LocalSource  # noqa: E402
from dflash2_ckpt.sources.gguf_header import GGUFHeader, read_gguf_header  # noqa: E402

FIXTURES = ROOT / "fixtures"
TINY_TARGET = FIXTURES / "targets" / "tiny-target"

KVs = dict[str, tuple[Any, GGUFValueType, GGUFValueType | None]]
Tensors = list[tuple[str, GGMLQuantizationType, tuple[int, ...], bytes]]   # name, type, HF shape, data


def header_of(path: Path) -> GGUFHeader:
    return read_gguf_header(LocalSource(path), path.name)[0]


def to_gguf(src: Path, dst: Path, **kw: Any) -> Path:
    kw.setdefault("target", TINY_TARGET)
    convert_to_gguf(src, dst, **kw)
    return dst


def target_with_tokenizer(d: Path, vocab: int, layers: int = 6) -> Path:
    import json
    d.mkdir(parents=True, exist_ok=True)
    (d / "config.json").write_text(json.dumps({"architectures": ["Qwen3ForCausalLM"], "model_type": "qwen3",
                                               "num_hidden_layers": layers, "vocab_size": vocab}))
    tiny_tokenizer(d, vocab)
    return d


def contents(path: Path) -> tuple[str, KVs, Tensors]:
    h = header_of(path)
    raw = path.read_bytes()
    kv: KVs = {k: (v.value, v.type, v.sub_type) for k, v in h.kv.items() if k != "general.architecture"}
    tensors: Tensors = [(t.name, GGMLQuantizationType(t.ggml_type), t.shape, raw[t.begin:t.end]) for t in h.tensors]
    return str(h.get("general.architecture")), kv, tensors


def write(path: Path, arch: str, kv: KVs, tensors: Tensors) -> Path:
    w = GGUFWriter(path, arch)
    for k, (v, t, sub) in kv.items():
        if t == GGUFValueType.STRING or sub == GGUFValueType.STRING:
            v = [s.encode("utf-8", "surrogateescape") for s in v] if isinstance(v, list) else v
        w.add_key_value(k, v, t, sub_type=sub)
    for name, qtype, shape, data in tensors:
        w.add_tensor(name, np.frombuffer(data, dtype=np.uint8).reshape(*shape[:-1], -1) if shape
                     else np.frombuffer(data, np.uint8), raw_dtype=qtype)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return path


def rewrite(src: Path, dst: Path, edit: Callable[[str, KVs, Tensors], tuple[str, KVs, Tensors]]) -> Path:
    arch, kv, tensors = contents(src)
    return write(dst, *edit(arch, dict(kv), list(tensors)))
