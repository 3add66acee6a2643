"""Our `convert --to gguf` against llama.cpp's own convert_hf_to_gguf.py (b11434, --target-model-dir) on
the recall drafter: tensor names, shapes, ggml types and bytes, metadata keys, types and values. Every
difference is listed here with why it is kept; anything else fails."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from gguf import GGUFReader

from .conftest import PAIR, PAIRMOD

# key -> why our file differs from llama.cpp's there (both files load and draft the same in llama.cpp)
JUSTIFIED = {
    "dflash.attention.sliding_window_pattern": "written even without sliding layers (all false); llama.cpp reads "
    "the pattern only when dflash.attention.sliding_window > 0 (llama.cpp b11434:src/models/dflash.cpp), so an "
    "all-false pattern changes nothing, and our reader keeps the per-layer types on the way back",
    "dflash.vocab_size": "llama.cpp takes the vocabulary size from the token list; the explicit key lets header "
    "checks compare it with the tensors without reading the token list",
    "dflash2_ckpt.source.config": "the source config.json, so that converting back writes it unchanged "
    "(llama.cpp ignores unknown keys)",
    "dflash2_ckpt.source.dtypes": "the source dtype of each tensor stored in another type (--outtype bf16 keeps "
    "vectors F32, as llama.cpp does), so that converting back restores it (llama.cpp ignores unknown keys)",
    "dflash2_ckpt.tokenizer.sha256": "the fingerprint of the target tokenizer written into the file, which "
    "verify --target compares (llama.cpp ignores unknown keys)",
    "general.name": "llama.cpp title-cases the directory name ('Drafter'); ours keeps it as is",
    "general.quantization_version": "llama.cpp writes 2 for every file; ours only where a tensor is quantized, "
    "which is where the value means something",
    "general.size_label": "a label llama.cpp derives from the parameter count; informational only",
    "general.type": "'model', llama.cpp's default; informational only",
}


def _fields(r: GGUFReader) -> dict:
    return {
        f.name: (f.types[0].name, f.contents()) for f in r.fields.values() if not f.name.startswith("GGUF.")
    }


def _diff(ours: Path, theirs: Path) -> tuple[set[str], list[str]]:
    a, b = GGUFReader(ours), GGUFReader(theirs)
    fa, fb = _fields(a), _fields(b)
    keys = {k for k in set(fa) | set(fb) if fa.get(k) != fb.get(k)}
    ta = {t.name: t for t in a.tensors}
    tb = {t.name: t for t in b.tensors}
    tensors = []
    for name in sorted(set(ta) | set(tb)):
        x, y = ta.get(name), tb.get(name)
        if x is None or y is None:
            tensors.append(f"{name}: only in {'llama.cpp' if x is None else 'ours'}")
        elif (x.tensor_type, list(x.shape)) != (y.tensor_type, list(y.shape)):
            tensors.append(
                f"{name}: {x.tensor_type.name}{list(x.shape)} vs {y.tensor_type.name}{list(y.shape)}"
            )
        elif not np.array_equal(np.asarray(x.data), np.asarray(y.data)):
            tensors.append(f"{name}: bytes differ")
    return keys, tensors


@pytest.mark.parametrize("outtype", [None, "bf16"])
def test_our_gguf_matches_llama_cpps_converter_or_says_why(outtype, engine, ggufs, tmp_path):
    if outtype is None:
        ours, theirs = ggufs["drafter"], ggufs["drafter_llamacpp"]
    else:
        ours, theirs = tmp_path / "ours.gguf", tmp_path / "theirs.gguf"
        PAIRMOD.our_convert(PAIR / "drafter", ours, ggufs["target"], outtype=outtype)
        PAIRMOD.llama_convert(
            engine, PAIR / "drafter", theirs, "--target-model-dir", str(PAIR / "target"), outtype=outtype
        )
    keys, tensors = _diff(ours, theirs)
    assert tensors == []  # names, shapes, ggml types (1-D and conv bases F32) and bytes
    assert keys <= set(JUSTIFIED), sorted(keys - set(JUSTIFIED))
    assert "dflash.attention.causal" not in keys and "dflash.target_layers" not in keys


def test_value_scale_is_written_as_llama_cpps_converter_writes_it(engine, ggufs, tmp_path):
    """MiMo's dflash_config.attention_value_scale: llama.cpp's converter writes dflash.attention.value_scale,
    which its DFlash graph multiplies V by (b11434:src/models/dflash.cpp); ours writes the same key, type, value."""
    import json
    import shutil

    src = tmp_path / "drafter"
    shutil.copytree(PAIR / "drafter", src)
    cfg = json.loads((src / "config.json").read_text())
    cfg["dflash_config"]["attention_value_scale"] = 0.5
    (src / "config.json").write_text(json.dumps(cfg))
    ours, theirs = tmp_path / "ours.gguf", tmp_path / "theirs.gguf"
    PAIRMOD.our_convert(src, ours, ggufs["target"])
    PAIRMOD.llama_convert(engine, src, theirs, "--target-model-dir", str(PAIR / "target"))
    key = "dflash.attention.value_scale"
    a, b = _fields(GGUFReader(ours)), _fields(GGUFReader(theirs))
    assert b[key] == ("FLOAT32", 0.5)  # what llama.cpp itself writes
    assert a[key] == b[key]  # before: absent from ours, so llama.cpp ran V unscaled
    keys, tensors = _diff(ours, theirs)
    assert tensors == [] and keys <= set(JUSTIFIED) | {"dflash2_ckpt.source.config"}
