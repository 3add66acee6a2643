"""NaN / Inf inside weights: found only by the explicit scan (`verify --scan`), streamed, exact counts."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from adv_corpus import GOOD
from adv_harness import run_inprocess, run_limited
from hypothesis import given, settings
from hypothesis import strategies as st

from dflash2_ckpt.checkpoint import Checkpoint, read_header
from dflash2_ckpt.checks.content import scan_tensor
from dflash2_ckpt.dev.synth import materialise
from dflash2_ckpt.sources import LocalSource, SourceBase
from dflash2_ckpt.sources.safetensors_header import TensorInfo
from dflash2_ckpt.usecases.verify import verify


def _poison(d: Path, where: dict[str, list[tuple[int, float]]]) -> None:
    """Write NaN / Inf at flat indices of named F32 tensors of d/model.safetensors, in place."""
    h = read_header(Checkpoint(LocalSource(d)), "model.safetensors")
    tensors = {t.name: t for t in h.tensors}
    with open(d / "model.safetensors", "r+b") as f:
        for name, spots in where.items():
            for idx, value in spots:
                f.seek(tensors[name].begin + 4 * idx)
                f.write(np.float32(value).tobytes())


def _recast(d: Path, dtype: str, poison: dict[str, list[tuple[int, float]]]) -> None:
    """Rewrite the checkpoint with every tensor in `dtype` (F16 / BF16), values poisoned as given."""
    h = read_header(Checkpoint(LocalSource(d)), "model.safetensors")
    blob = (d / "model.safetensors").read_bytes()
    arrays = {t.name: np.frombuffer(blob[t.begin : t.end], "<f4").copy() for t in h.tensors}
    for name, spots in poison.items():
        for idx, value in spots:
            arrays[name][idx] = value

    def data(name: str, nbytes: int) -> bytes:
        a = arrays[name]
        if dtype == "F16":
            return a.astype("<f2").tobytes()
        return (a.view("<u4") >> 16).astype("<u2").tobytes()  # BF16 = the high half of F32

    cfg = json.loads((d / "config.json").read_text())
    materialise(d, cfg, [(t.name, dtype, t.shape) for t in h.tensors], data=data)


POISON = {
    "fc.weight": [(5, float("nan")), (700, float("inf")), (701, float("-inf"))],
    "layers.1.mlp.down_proj.weight": [(2047, float("nan"))],
}
EXPECT = {
    "fc.weight": {"count": 3, "nan": 1, "inf": 2, "first_index": 5},
    "layers.1.mlp.down_proj.weight": {"count": 1, "nan": 1, "inf": 0, "first_index": 2047},
}


@pytest.mark.parametrize("dtype", ["F32", "F16", "BF16"])
def test_scan_reports_each_poisoned_tensor(dtype: str, tmp_path: Path) -> None:
    d = tmp_path / "ckpt"
    shutil.copytree(GOOD / "nested-v2", d)
    if dtype == "F32":
        _poison(d, POISON)
    else:
        _recast(d, dtype, POISON)
    code, report = run_inprocess(["verify", str(d), "--scan"])
    assert code == 1
    got = {
        f["tensor"]: {k: f["details"][k] for k in ("count", "nan", "inf", "first_index")}
        for f in report["findings"]
        if f["code"] == "DF611"
    }
    assert got == EXPECT
    assert report["scan"]["tensors_scanned"] == 36
    # without --scan the same checkpoint passes: NaN is never assumed, and no data is read
    code, report = run_inprocess(["verify", str(d)])
    assert code == 0 and not [f for f in report["findings"] if f["code"] == "DF611"]


class RecordingSource(LocalSource):
    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self.reads: list[tuple[str, int, int]] = []

    def read_range(self, name: str, start: int, length: int) -> bytes:
        self.reads.append((name, start, length))
        return super().read_range(name, start, length)


def test_without_scan_no_tensor_byte_is_read(tmp_path: Path) -> None:
    d = tmp_path / "ckpt"
    shutil.copytree(GOOD / "nested-v2", d)
    _poison(d, POISON)
    src = RecordingSource(d)
    report = verify(src)
    data_start = 8 + read_header(Checkpoint(LocalSource(d)), "model.safetensors").header_len
    assert all(
        start + length <= data_start for name, start, length in src.reads if name.endswith(".safetensors")
    )
    assert not report.failed()
    src = RecordingSource(d)
    report = verify(src, scan=True)
    assert any(start >= data_start for name, start, _ in src.reads if name.endswith(".safetensors"))
    assert {f.tensor for f in report.findings if f.code == "DF611"} == set(EXPECT)


class MemorySource(SourceBase):
    """A one-file Source over bytes, so the property test below needs no filesystem."""

    label = "memory"

    def __init__(self, blob: bytes) -> None:
        self.blob = blob

    def list_files(self) -> list[str]:
        return ["x.safetensors"]

    def file_size(self, name: str) -> int:
        return len(self.blob)

    def read_range(self, name: str, start: int, length: int) -> bytes:
        return self.blob[start : start + length]

    def local_path(self, name: str) -> Any:
        return None


FLOATS = st.floats(allow_nan=True, allow_infinity=True, width=32)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(FLOATS, min_size=1, max_size=300),
    st.sampled_from(["F32", "F16", "BF16", "F64"]),
    st.integers(1, 64),
)
def test_chunked_scan_matches_numpy_at_any_chunk_size(values: list[float], dtype: str, chunk: int) -> None:
    a32 = np.array(values, np.float32)
    if dtype == "F16":
        with np.errstate(over="ignore"):
            raw, ref = a32.astype("<f2").tobytes(), a32.astype("<f2").astype(np.float64)
    elif dtype == "BF16":
        hi = (a32.view("<u4") >> 16).astype("<u2")
        raw, ref = hi.tobytes(), (hi.astype("<u4") << 16).view("<f4").astype(np.float64)
    elif dtype == "F64":
        raw, ref = a32.astype("<f8").tobytes(), a32.astype(np.float64)
    else:
        raw, ref = a32.tobytes(), a32.astype(np.float64)
    blob = b"\0" * 16 + raw
    t = TensorInfo("t", dtype, (len(values),), 16, 16 + len(raw), "x.safetensors")
    r = scan_tensor(Checkpoint(MemorySource(blob)), t, chunk_bytes=chunk)
    bad = ~np.isfinite(ref)
    assert (r.nan, r.inf) == (int(np.isnan(ref).sum()), int(np.isinf(ref).sum()))
    assert r.first_index == (int(np.argmax(bad)) if bad.any() else None)


def test_f8_formats() -> None:
    blob = bytes([0x00, 0x7C, 0xFC, 0x7D, 0x7F, 0xFF, 0x01])
    t = lambda dt: TensorInfo("t", dt, (len(blob),), 0, len(blob), "x.safetensors")  # noqa: E731
    ck = Checkpoint(MemorySource(blob))
    e5 = scan_tensor(ck, t("F8_E5M2"))  # 7C/FC = +-Inf, 7D/7F/FF = NaN
    assert (e5.inf, e5.nan, e5.first_index) == (2, 3, 1)
    e4 = scan_tensor(ck, t("F8_E4M3"))  # only S.1111.111 is NaN (7F, FF)
    assert (e4.inf, e4.nan, e4.first_index) == (0, 2, 4)
    e8 = scan_tensor(ck, t("F8_E8M0"))  # only FF
    assert (e8.inf, e8.nan, e8.first_index) == (0, 1, 5)


def test_scan_streams_a_512_mib_tensor_under_a_384_mib_limit(tmp_path: Path) -> None:
    # sparse: the disk holds almost nothing, but the scan must read every byte through bounded chunks
    d = tmp_path / "ckpt"
    shutil.copytree(GOOD / "nested-v2", d)
    cfg = json.loads((d / "config.json").read_text())
    materialise(d, cfg, [("junk.weight", "F32", (128 * 1024 * 1024,))])
    code, report, _ = run_limited(["verify", str(d), "--scan"], timeout=120)
    assert code == 1  # the layout is wrong on purpose; what matters is that the scan finished
    assert report["scan"]["bytes_scanned"] == 512 * 1024 * 1024
    assert not [f for f in report["findings"] if f["code"] == "DF611"]
