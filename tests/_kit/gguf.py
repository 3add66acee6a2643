"""Builders for GGUF tests: our converter's output, and rewrites of it with edited metadata or tensors
(fixtures/gguf_fixtures.py: written by the gguf package's GGUFWriter, so hostile variants are still
well-formed files)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]

from build import tiny_tokenizer  # noqa: E402
from dflash2_ckpt.convert.to_gguf import convert_to_gguf  # noqa: E402
from dflash2_ckpt.sources import LocalSource  # noqa: E402
from dflash2_ckpt.sources.gguf_header import GGUFHeader, read_gguf_header  # noqa: E402
from gguf_fixtures import KVs, Tensors, contents, rewrite, write  # noqa: E402,F401

FIXTURES = ROOT / "fixtures"
TINY_TARGET = FIXTURES / "targets" / "tiny-target"


def header_of(path: Path) -> GGUFHeader:
    return read_gguf_header(LocalSource(path), path.name)[0]


def to_gguf(src: Path, dst: Path, **kw: Any) -> Path:
    kw.setdefault("target", TINY_TARGET)
    convert_to_gguf(src, dst, **kw)
    return dst


def target_with_tokenizer(d: Path, vocab: int, layers: int = 6) -> Path:
    import json

    d.mkdir(parents=True, exist_ok=True)
    (d / "config.json").write_text(
        json.dumps(
            {
                "architectures": ["Qwen3ForCausalLM"],
                "model_type": "qwen3",
                "num_hidden_layers": layers,
                "vocab_size": vocab,
            }
        )
    )
    tiny_tokenizer(d, vocab)
    return d
