"""nested -> GGUF -> nested gives back the very files: the source dtypes a GGUF stores otherwise (vectors
kept F32 as llama.cpp's converter does, a whole --outtype cast) are recorded and restored when exact.

Sources are written by torch's safetensors (save_file), as trainers write them, so byte identity is with
the file a user has, not with our own writer's output."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file, save_file

from _kit.cli import invoke_cli
from _kit.gguf import FIXTURES, header_of, rewrite, target_with_tokenizer
from dflash2_ckpt.cli import main
from dflash2_ckpt.formats import gguf_names as N
from gguf import GGUFValueType

_TORCH = {"BF16": torch.bfloat16, "F16": torch.float16, "F32": torch.float32}
_NAMES = {"BF16": "bfloat16", "F16": "float16", "F32": "float32"}


def _source(d: Path, dtype: str, vectors: str | None = None) -> Path:
    """nested-v2 in `dtype` (its vectors in `vectors` when given: a mixed checkpoint), written by torch."""
    d.mkdir(parents=True)
    t = load_file(FIXTURES / "good" / "nested-v2" / "model.safetensors")
    save_file(
        {k: v.to(_TORCH[vectors if vectors and v.dim() < 2 else dtype]) for k, v in t.items()},
        d / "model.safetensors",
        metadata={"format": "pt"},
    )
    cfg = json.loads((FIXTURES / "good" / "nested-v2" / "config.json").read_text())
    cfg["dtype"] = _NAMES[dtype]
    (d / "config.json").write_text(json.dumps(cfg, indent=2) + "\n")
    return d


def _round_trip(tmp: Path, src: Path, *extra: str) -> tuple[Path, Path, str]:
    g, back = tmp / "d.gguf", tmp / "back"
    r = invoke_cli(
        main,
        [
            "convert",
            str(src),
            "-o",
            str(g),
            "--to",
            "gguf",
            "--target",
            str(target_with_tokenizer(tmp / "target", 64)),
            *extra,
        ],
    )
    assert r.exit_code in (0, 1), r.output  # 1: DF907, reported, not refused
    assert g.exists(), r.output
    r = invoke_cli(main, ["convert", str(g), "-o", str(back), "--to", "nested"])
    assert back.exists(), r.output
    return g, back, r.output


@pytest.mark.parametrize("dtype", ["BF16", "F16", "F32"])
@pytest.mark.parametrize("outtype", ["source", "same"])
def test_round_trip_gives_back_the_source_files(tmp_path: Path, dtype: str, outtype: str) -> None:
    src = _source(tmp_path / "src", dtype)
    extra = ["--outtype", dtype.lower()] if outtype == "same" else []
    g, back, out = _round_trip(tmp_path, src, *extra)
    types = {t.name: t.type_name for t in header_of(g).tensors}
    if extra and dtype != "F32":
        # what made the round trip inexact: vectors stored F32 as llama.cpp's converter stores them
        assert types["output_norm.weight"] == "F32" and types["fc.weight"] == dtype
    assert (back / "model.safetensors").read_bytes() == (src / "model.safetensors").read_bytes()
    assert (back / "config.json").read_bytes() == (src / "config.json").read_bytes()


def test_a_mixed_checkpoint_keeps_its_header_order(tmp_path: Path) -> None:
    """BF16 matrices and F32 vectors: safetensors lays them out by dtype, then name; the GGUF keeps that
    order and the dtypes, so the file comes back as it was, through an --outtype f32 GGUF too."""
    src = _source(tmp_path / "src", "BF16", vectors="F32")
    g, back, _ = _round_trip(tmp_path, src, "--outtype", "f32")
    assert {t.type_name for t in header_of(g).tensors} == {"F32"}
    assert (back / "model.safetensors").read_bytes() == (src / "model.safetensors").read_bytes()


def test_a_lossy_cast_comes_back_in_the_source_dtypes(tmp_path: Path) -> None:
    """F32 -> --outtype bf16: the cast tensors' values are the rounded ones (vectors and conv base kernels
    stay F32), the dtypes the source's."""
    src = _source(tmp_path / "src", "F32")
    g, back, out = _round_trip(tmp_path, src, "--outtype", "bf16")
    cast = {N.gguf_to_hf(t.name) for t in header_of(g).tensors if t.type_name == "BF16"}
    want = load_file(src / "model.safetensors")
    got = load_file(back / "model.safetensors")
    assert {k: v.dtype for k, v in got.items()} == {k: v.dtype for k, v in want.items()}
    assert 0 < len(cast) < len(want)
    assert all(
        torch.equal(got[k], want[k].to(torch.bfloat16).to(torch.float32) if k in cast else want[k])
        for k in want
    )
    assert "stored in their source dtype again" in out


def test_a_quantized_gguf_restores_what_it_holds_exactly(tmp_path: Path) -> None:
    """BF16 -> --outtype q8_0: the vectors (kept F32) come back BF16 and bit-identical; the quantized
    tensors' values are the quantized ones, dequantized to F32 and never claimed as restored."""
    src = _source(tmp_path / "src", "BF16")
    g, back, _ = _round_trip(tmp_path, src, "--outtype", "q8_0", "--format", "json")
    types = {N.gguf_to_hf(t.name): t.type_name for t in header_of(g).tensors}
    want, got = load_file(src / "model.safetensors"), load_file(back / "model.safetensors")
    for k, v in want.items():
        if types[k] == "Q8_0":
            assert got[k].dtype == torch.float32
        else:
            assert types[k] == "F32" and got[k].dtype == torch.bfloat16 and torch.equal(got[k], v)
    r = invoke_cli(
        main, ["convert", str(g), "-o", str(tmp_path / "again"), "--to", "nested", "--format", "json"]
    )
    doc = json.loads(r.stdout)
    assert doc["restored_tensors"] == sum(t == "F32" for t in types.values()) > 0
    assert doc["dequantized_tensors"] == sum(t == "Q8_0" for t in types.values()) > 0


@pytest.mark.parametrize("record", ['{"output_norm.weight":"BF16"}', "not json", '{"fc.weight":"Q4_K"}'])
def test_a_record_the_values_do_not_fit_keeps_the_gguf_type(tmp_path: Path, record: str) -> None:
    """A recorded dtype the values cannot be stored in exactly (an F32 norm claimed BF16), or a record that
    is not ours: the tensor keeps the GGUF's type, a note says why, nothing crashes."""
    src = _source(tmp_path / "src", "F32")
    g = tmp_path / "d.gguf"
    invoke_cli(
        main,
        [
            "convert",
            str(src),
            "-o",
            str(g),
            "--to",
            "gguf",
            "--target",
            str(target_with_tokenizer(tmp_path / "target", 64)),
        ],
    )
    edited = rewrite(
        g,
        tmp_path / "e.gguf",
        lambda a, kv, t: (a, {**kv, N.KEY_SOURCE_DTYPES: (record, GGUFValueType.STRING, None)}, t),
    )
    r = invoke_cli(
        main, ["convert", str(edited), "-o", str(tmp_path / "back"), "--to", "nested", "--format", "json"]
    )
    doc = json.loads(r.stdout)
    assert doc["written"] and doc["restored_tensors"] == 0
    assert any(
        "not written in their recorded source dtype" in n or "is not a JSON object" in n for n in doc["notes"]
    ), doc["notes"]
    assert (tmp_path / "back" / "model.safetensors").read_bytes() == (src / "model.safetensors").read_bytes()
