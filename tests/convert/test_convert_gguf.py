"""convert --to gguf and back: byte-identical round trips over generated drafters, type changes, the
tokenizer, refusals, and the never-damage guarantees."""

from __future__ import annotations

import json
import math
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

from _kit import extras
from _kit.cli import invoke_cli
from _kit.convert import build, drafters, flat_config, leftovers, nested_config, tensor_bytes, tree_digest
from _kit.gguf import FIXTURES, TINY_TARGET, header_of, target_with_tokenizer, to_gguf
from dflash2_ckpt.checkpoint import open_checkpoint
from dflash2_ckpt.cli import main
from dflash2_ckpt.convert.from_gguf import convert_from_gguf
from dflash2_ckpt.convert.gguf_exact import gguf_differences
from dflash2_ckpt.convert.stream import WriteError
from dflash2_ckpt.convert.to_gguf import convert_to_gguf
from dflash2_ckpt.errors import ConversionError
from dflash2_ckpt.formats import gguf_names as N
from dflash2_ckpt.sources import LocalSource
from dflash2_ckpt.sources.dense import read_gguf_tensor, to_float32

ROOT = Path(__file__).resolve().parents[2]


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(drafters())
def test_bf16_round_trip_is_byte_identical(p: dict[str, Any]) -> None:
    with tempfile.TemporaryDirectory() as d:
        root = Path(d)
        make = nested_config if p["V"] % 2 == 0 else flat_config  # both HF dialects
        src = build(root / "src", make(p), dtype="BF16", seed=p["mask"])
        target = target_with_tokenizer(root / "target", p["V"])
        g = root / "d.gguf"
        convert_to_gguf(src, g, target=target)
        hf, gg = open_checkpoint(src), open_checkpoint(g)
        assert hf.spec is not None and gg.spec is not None and gguf_differences(hf.spec, gg.spec) == []
        # exact: the GGUF's tensor bytes are the source's
        h, raw = header_of(g), g.read_bytes()
        src_bytes = tensor_bytes(src)
        for t in h.tensors:
            assert t.type_name == "BF16"
            assert raw[t.begin : t.end] == src_bytes[N.gguf_to_hf(t.name) or ""][1]
        dialect = hf.detection.dialect if hf.detection else None
        convert_from_gguf(g, root / "back", to=dialect)  # type: ignore[arg-type]
        assert tree_digest(root / "back") == tree_digest(src)
        assert leftovers(root) == []


def test_written_file_loads_in_gguf_reader_with_its_values(tmp_path: Path) -> None:
    from gguf import GGUFReader

    g = to_gguf(FIXTURES / "good" / "nested-v2", tmp_path / "d.gguf")
    r = GGUFReader(g)
    src = open_checkpoint(FIXTURES / "good" / "nested-v2")
    for t in r.tensors:
        hf = N.gguf_to_hf(t.name)
        info = src.tensors[hf or ""]
        want = to_float32(
            (FIXTURES / "good" / "nested-v2" / info.file).read_bytes()[info.begin : info.end],
            info.dtype,
            info.shape,
        )
        assert np.array_equal(np.asarray(t.data).reshape(info.shape), want)
    assert [int(v) for v in r.fields[N.KEY_TARGET_LAYERS].contents()] == [1, 3]
    assert int(r.fields[N.KEY_MASK].contents()) == 63


def test_q8_0_and_back_reports_the_loss(tmp_path: Path) -> None:
    src = FIXTURES / "good" / "nested-v2"
    g = to_gguf(src, tmp_path / "q.gguf", outtype="q8_0")
    h = header_of(g)
    types = {t.name: t.type_name for t in h.tensors}
    assert types["blk.0.ffn_up.weight"] == "Q8_0" and types["output_norm.weight"] == "F32"
    srcck = open_checkpoint(src)
    a = read_gguf_tensor(LocalSource(g), h, "blk.0.ffn_up.weight")
    info = srcck.tensors["layers.0.mlp.up_proj.weight"]
    want = to_float32((src / info.file).read_bytes()[info.begin : info.end], info.dtype, info.shape)
    assert a.shape == want.shape and 0 < np.abs(a - want).max() <= np.abs(want).max() / 127 + 1e-6
    r = convert_from_gguf(g, tmp_path / "back", to="nested")
    doc = r.to_json()
    assert doc["dequantized_tensors"] == sum(v == "Q8_0" for v in types.values()) > 0
    assert any("dequantized to F32" in n for n in doc["notes"])
    back = open_checkpoint(tmp_path / "back")
    assert back.tensors["layers.0.mlp.up_proj.weight"].dtype == "F32"


def test_bf16_to_f32_is_lossless(tmp_path: Path) -> None:
    from _kit.convert import drafters as _  # noqa: F401

    p = {
        "version": "v2",
        "H": 32,
        "I": 16,
        "layers": 1,
        "nq": 2,
        "nkv": 1,
        "hd": 8,
        "V": 64,
        "bias": False,
        "theta": 10000.0,
        "layer_types": ["full_attention"],
        "causal": False,
        "block": 4,
        "mask": 63,
        "taps": [1],
        "dtype": "bfloat16",
        "T": 2,
        "gs": 16,
        "R": 8,
        "K": 4,
    }
    src = build(tmp_path / "s", nested_config(p), dtype="BF16")
    g = to_gguf(src, tmp_path / "f.gguf", outtype="f32")
    h = header_of(g)
    assert {t.type_name for t in h.tensors} == {"F32"}
    s = open_checkpoint(src)
    for t in h.tensors:
        info = s.tensors[N.gguf_to_hf(t.name) or ""]
        want = to_float32((src / info.file).read_bytes()[info.begin : info.end], "BF16", info.shape)
        assert np.array_equal(read_gguf_tensor(LocalSource(g), h, t).view(np.uint32), want.view(np.uint32))


def test_tokenizer_from_a_target_gguf_keeps_the_drafters_mask(tmp_path: Path) -> None:
    from _kit.gguf import rewrite
    from gguf import GGUFValueType

    donor = to_gguf(FIXTURES / "good" / "nested-v2", tmp_path / "donor.gguf")
    donor = rewrite(
        donor,
        tmp_path / "donor2.gguf",
        lambda a, kv, t: (a, {**kv, N.KEY_MASK: (7, GGUFValueType.UINT32, None)}, t),
    )
    g = to_gguf(FIXTURES / "good" / "flat-v2", tmp_path / "d.gguf", target=None, tokenizer_from=donor)
    h, d = header_of(g), header_of(donor)
    assert h.get("tokenizer.ggml.tokens") == d.get("tokenizer.ggml.tokens")
    assert h.get("tokenizer.ggml.merges") == d.get("tokenizer.ggml.merges")
    assert h.get(N.KEY_MASK) == 63


def test_target_tokenizer_padded_and_specials(tmp_path: Path) -> None:
    h = header_of(to_gguf(FIXTURES / "good" / "nested-v2", tmp_path / "d.gguf"))
    tokens = h.get("tokenizer.ggml.tokens")
    tj = json.loads((TINY_TARGET / "tokenizer.json").read_text())
    assert len(tokens) == 64 and tokens[:63] == sorted(tj["model"]["vocab"], key=tj["model"]["vocab"].get)
    assert h.get("tokenizer.ggml.eos_token_id") == 1 and h.get("tokenizer.ggml.pre") == "qwen2"


def test_refusals(tmp_path: Path) -> None:
    src = FIXTURES / "good" / "nested-v2"
    with pytest.raises(ConversionError, match="tokenizer"):
        convert_to_gguf(src, tmp_path / "a.gguf", target=None)
    g = to_gguf(src, tmp_path / "a.gguf")
    before = g.read_bytes()
    with pytest.raises(ConversionError, match="already exists"):
        to_gguf(src, g)
    to_gguf(FIXTURES / "good" / "nested-v1", g, force=True)
    assert g.read_bytes() != before and header_of(g).get(N.KEY_SEL_TOP_K) is None
    with pytest.raises(ConversionError, match="only BF16 / F16 / F32"):
        to_gguf(FIXTURES / "broken" / "quantized-tensors", tmp_path / "q.gguf")
    with pytest.raises(ConversionError, match="contains the source"):  # --force would delete the source
        convert_from_gguf(g, tmp_path, to="nested")
    inside = tmp_path / "src"
    shutil.copytree(src, inside)
    with pytest.raises(ConversionError, match="inside the source"):
        to_gguf(inside, inside / "sub" / "x.gguf")
    assert sorted(p.name for p in inside.iterdir()) == sorted(p.name for p in src.iterdir())
    assert leftovers(tmp_path) == []


def test_failed_write_leaves_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import dflash2_ckpt.convert.to_gguf as T

    def boom(*a: Any, **k: Any) -> int:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(T, "write_pieces", boom)
    with pytest.raises(WriteError, match="No space left"):
        convert_to_gguf(FIXTURES / "good" / "nested-v2", tmp_path / "x.gguf", target=TINY_TARGET)
    assert list(tmp_path.iterdir()) == []


def test_cli(tmp_path: Path) -> None:
    run = invoke_cli
    out = tmp_path / "d.gguf"
    r = run(
        main,
        [
            "convert",
            str(FIXTURES / "good" / "nested-v2"),
            "-o",
            str(out),
            "--to",
            "gguf",
            "--target",
            str(TINY_TARGET),
            "--format",
            "json",
        ],
    )
    assert r.exit_code == 1, r.output  # written, its own check found DF907 (as verify of it does below)
    doc = json.loads(r.output)
    assert doc["written"] and doc["exact_tensors"] == 36 and doc["converted_tensors"] == 0
    assert [f["code"] for f in doc["findings"] if f["severity"] == "error"] == ["DF907"]
    r = run(
        main,
        ["convert", str(out), "-o", str(tmp_path / "back"), "--to", "flat", "--target", str(TINY_TARGET)],
    )
    assert r.exit_code == 0, r.output
    assert open_checkpoint(tmp_path / "back").detection.dialect == "flat"  # type: ignore[union-attr]
    r = run(main, ["convert", str(out), "-o", str(tmp_path / "x"), "--to", "nested", "--outtype", "q8_0"])
    assert r.exit_code == 2
    r = run(main, ["convert", str(out), "-o", str(tmp_path / "y.gguf"), "--to", "gguf"])
    assert r.exit_code == 2 and "already GGUF" in r.output  # usage: a conversion that cannot be asked for
    r = run(main, ["convert", str(out), "-o", str(tmp_path / "z"), "--to", "nested", "--format", "json"])
    assert r.exit_code == 0 and json.loads(r.output)["from"] == "gguf"
    r = run(
        main,
        [
            "convert",
            str(FIXTURES / "good" / "nested-v2"),
            "-o",
            str(out),
            "--to",
            "gguf",
            "--target",
            str(TINY_TARGET),
            "--format",
            "sarif",
        ],
    )
    assert r.exit_code == 2 and "already exists" in r.output
    r = run(main, ["verify", str(out), "--format", "json"])
    assert (
        r.exit_code == 1 and json.loads(r.output)["summary"]["dialect"] == "gguf"
    )  # DF907 on the tiny drafter


def test_header_level_gguf_never_imports_torch(tmp_path: Path) -> None:
    g = to_gguf(FIXTURES / "good" / "nested-v2", tmp_path / "d.gguf")
    code = (
        f"import sys; from dflash2_ckpt.usecases.verify import verify, inspect; verify({str(g)!r}); inspect({str(g)!r}); "
        "assert 'torch' not in sys.modules, 'torch imported'"
    )
    subprocess.run(
        [sys.executable, "-c", code], check=True, cwd=ROOT, env={"PYTHONPATH": str(ROOT), "PATH": ""}
    )


def test_dense_reader_gives_the_same_values_on_both_sides(tmp_path: Path) -> None:
    from dflash2_ckpt.sources.dense import read_checkpoint_tensor

    src = FIXTURES / "good" / "nested-v2"
    hf = open_checkpoint(src)
    for outtype, tol in ((None, 0.0), ("q8_0", 0.02)):
        gg = open_checkpoint(to_gguf(src, tmp_path / f"{outtype}.gguf", outtype=outtype))
        assert set(gg.tensors) == set(hf.tensors)
        for name in hf.tensors:
            a, b = read_checkpoint_tensor(hf, name), read_checkpoint_tensor(gg, name)
            assert a.shape == b.shape and np.abs(a - b).max() <= tol * max(1.0, float(np.abs(a).max()))
    with pytest.raises(ConversionError, match="no tensor"):
        read_checkpoint_tensor(hf, "nope.weight")


def test_smoke_and_scan_on_a_gguf_file(tmp_path: Path) -> None:
    g = to_gguf(FIXTURES / "good" / "nested-v2", tmp_path / "d.gguf")
    r = invoke_cli(main, ["verify", str(g), "--scan", "--format", "json"])
    assert json.loads(r.output)["scan"]["tensors_scanned"] == 36
    if extras.missing("smoke"):  # smoke names a missing extra before it opens anything
        pytest.skip(extras.reason("smoke"))
    r = invoke_cli(main, ["smoke", str(g)])
    assert r.exit_code == 3 and "convert it back first" in r.output


def test_dry_run_and_f16(tmp_path: Path) -> None:
    src = FIXTURES / "good" / "nested-v2"
    r = invoke_cli(
        main,
        [
            "convert",
            str(src),
            "-o",
            str(tmp_path / "d.gguf"),
            "--to",
            "gguf",
            "--target",
            str(TINY_TARGET),
            "--dry-run",
            "--format",
            "json",
        ],
    )
    assert r.exit_code == 0 and json.loads(r.output)["dry_run"] and list(tmp_path.iterdir()) == []
    g = to_gguf(src, tmp_path / "h.gguf", outtype="f16")
    h = header_of(g)
    # as llama.cpp's converter writes it: matrices F16, vectors and conv base kernels F32
    assert {t.type_name for t in h.tensors if len(t.ne) >= 2 and not t.name.endswith("_conv_base")} == {"F16"}
    assert {t.type_name for t in h.tensors if len(t.ne) < 2 or t.name.endswith("_conv_base")} == {"F32"}
    assert h.get(N.KEY_FILE_TYPE) == 1  # MOSTLY_F16
    hf = open_checkpoint(src)
    info = hf.tensors["fc.weight"]
    want = to_float32((src / info.file).read_bytes()[info.begin : info.end], info.dtype, info.shape)
    got = read_gguf_tensor(LocalSource(g), h, "fc.weight")
    assert np.allclose(got, want.astype(np.float16).astype(np.float32), equal_nan=True)


def test_verify_hook_checks_each_gguf_file(tmp_path: Path) -> None:
    from dflash2_ckpt.usecases.hooks import check_dirs, checkpoint_dirs

    a = to_gguf(FIXTURES / "good" / "nested-v2", tmp_path / "a.gguf")
    b = to_gguf(FIXTURES / "good" / "nested-v1", tmp_path / "b.gguf")
    targets = checkpoint_dirs([a, b, tmp_path / "README.md"])
    assert targets == [a, b]
    reports = dict(check_dirs(targets, "headers"))
    assert reports[a].summary["version"] == "v2" and reports[b].summary["version"] == "v1"


def test_a_source_with_error_findings_needs_accepting(tmp_path: Path) -> None:
    from dflash2_ckpt.errors import SourceFindingsError

    src = FIXTURES / "broken" / "taps-exceed-block"
    with pytest.raises(SourceFindingsError, match="DF104"):
        to_gguf(src, tmp_path / "a.gguf")
    assert not (tmp_path / "a.gguf").exists()
    to_gguf(src, tmp_path / "a.gguf", accept_findings=["DF104"])
    from dflash2_ckpt.usecases.verify import verify

    assert "DF104" in {f.code for f in verify(tmp_path / "a.gguf").findings}  # carried over, as accepted


def test_dry_run_of_a_quantized_gguf_reads_the_header_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`convert FILE.gguf --dry-run` plans from the header: no tensor is read or dequantized."""
    import json as _json

    import dflash2_ckpt.convert.from_gguf as fg
    from dflash2_ckpt.cli import main

    g = to_gguf(FIXTURES / "good" / "nested-v2", tmp_path / "q.gguf", outtype="q8_0")

    def no_data(*a: Any, **k: Any) -> Any:
        raise AssertionError("a dry run dequantized a tensor")

    monkeypatch.setattr(fg, "to_float32", no_data)
    r = invoke_cli(
        main,
        ["convert", str(g), "--to", "nested", "-o", str(tmp_path / "out"), "--dry-run", "--format", "json"],
    )
    assert r.exit_code == 0, r.output
    doc = _json.loads(r.stdout)
    assert doc["dequantized_tensors"] > 0 and not (tmp_path / "out").exists()


def test_the_conversion_holds_one_dequantized_chunk_at_a_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each quantized tensor is dequantized in runs of whole rows, each written and compared before the next is
    made: when one is made, every earlier one has been released, and none is over the chunk size (peak memory
    is one chunk, not the tensor: gguf's own dequantize holds a whole tensor's float32 values twice)."""
    import gc
    import weakref

    import dflash2_ckpt.convert.from_gguf as fg

    g = to_gguf(FIXTURES / "good" / "nested-v2", tmp_path / "q.gguf", outtype="q8_0")
    monkeypatch.setattr(fg, "_CHUNK_BYTES", 4096, raising=False)
    alive: list[weakref.ref[Any]] = []
    sizes: list[int] = []
    real = fg.to_float32

    def tracked(*a: Any, **k: Any) -> Any:
        gc.collect()
        assert all(r() is None for r in alive), "an earlier dequantized chunk is still held"
        out = real(*a, **k)
        alive.append(weakref.ref(out))
        sizes.append(out.nbytes)
        return out

    monkeypatch.setattr(fg, "to_float32", tracked)
    r = convert_from_gguf(g, tmp_path / "back", to="nested")
    h = header_of(g)
    rows = {t.name: t.shape[-1] * 4 for t in h.tensors if t.type_name == "Q8_0"}
    assert r.written and len(alive) > sum(not t["exact"] for t in r.tensors) > 1  # several chunks per tensor
    assert max(sizes) <= max(4096, max(rows.values())) < max(4 * math.prod(t.shape) for t in h.tensors)


def test_chunked_dequantization_gives_the_whole_tensors_values(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Row runs of every size (one row, a few, a run that ends mid-tensor) give the gguf package's values for
    the whole tensor, placed where the safetensors header says."""
    import dflash2_ckpt.convert.from_gguf as fg

    g = to_gguf(FIXTURES / "good" / "nested-v2", tmp_path / "q.gguf", outtype="q8_0")
    h = header_of(g)
    quantized = [t for t in h.tensors if t.type_name == "Q8_0"]
    for chunk in (1, 3 * 4 * quantized[0].shape[-1] + 4, 1 << 20):
        out = tmp_path / f"back-{chunk}"
        monkeypatch.setattr(fg, "_CHUNK_BYTES", chunk, raising=False)
        convert_from_gguf(g, out, to="nested")
        back = open_checkpoint(out)
        for t in quantized:
            info = back.tensors[N.gguf_to_hf(t.name) or ""]
            got = np.frombuffer((out / info.file).read_bytes()[info.begin : info.end], np.float32).reshape(
                info.shape
            )
            assert np.array_equal(got, read_gguf_tensor(LocalSource(g), h, t)), (chunk, t.name)


@pytest.mark.parametrize("outtype", ["q8_0", "bf16"])
def test_to_gguf_type_changes_are_made_in_row_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, outtype: str
) -> None:
    """`--outtype` casts and quantizes in runs of whole rows, one run in memory at a time, and the runs join
    to the bytes of the whole tensor converted at once (one row per run against the whole tensor)."""
    import dflash2_ckpt.convert.to_gguf as tg

    src = FIXTURES / "good" / "nested-v2"
    monkeypatch.setattr(tg, "_CHUNK_BYTES", 1 << 40, raising=False)
    whole = to_gguf(src, tmp_path / "whole.gguf", outtype=outtype).read_bytes()
    monkeypatch.setattr(tg, "_CHUNK_BYTES", 1, raising=False)
    sizes: list[tuple[int, ...]] = []
    real = tg.to_float32

    def tracked(raw: bytes, dtype: str, shape: tuple[int, ...]) -> Any:
        sizes.append(shape)
        return real(raw, dtype, shape)

    monkeypatch.setattr(tg, "to_float32", tracked)
    assert to_gguf(src, tmp_path / "rows.gguf", outtype=outtype).read_bytes() == whole
    matrices = [s for s in sizes if len(s) == 2]
    assert matrices and all(s[0] == 1 for s in matrices)  # one row per run
