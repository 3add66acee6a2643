"""A pack-quantized (W4A16 / W8A16) pair is compared in numpy (diff/np_figures.py) without importing torch,
and its receipt agrees with the torch path's within np_figures.TOLERANCE: verdicts, counts and max abs
errors equal, cosine and relative RMS errors (measured and predicted) within the tolerance. The decoder
gives ct_decode.pack's float32 values bit for bit (which tests/diff/test_ct_decode.py ties to the
compressed-tensors library)."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

torch = pytest.importorskip("torch")
pytest.importorskip("compressed_tensors")

import diff_golden  # noqa: E402
from conftest import FIXTURES  # noqa: E402
from dflash2_ckpt.diff import _numpy_pair, ct_decode, diff, np_figures  # noqa: E402  # noqa: E402
from dflash2_ckpt.diff.compare import dtype_noise, dtype_noise_np  # noqa: E402
from dflash2_ckpt.diff.sides import open_side  # noqa: E402
from dflash2_ckpt.quant.config import Scheme  # noqa: E402

ROOT = FIXTURES.parent
GOOD = FIXTURES / "good" / "nested-v2"
RELATIVE = ("cosine", "relative_rms_error", "predicted_relative_rms_error")


@pytest.fixture(scope="module")
def numpy_cases(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, Path]]:
    built = diff_golden.build(tmp_path_factory.mktemp("np"))
    return {n: (d, r) for n, d, r in built if _numpy_pair(open_side(d), open_side(r))}


def test_the_pack_quantized_cases_take_the_numpy_path(numpy_cases: dict[str, tuple[Path, Path]]) -> None:
    assert set(numpy_cases) == {
        "ct-w4a16",
        "ct-w8a16",
        "ct-w4a16-asymmetric",
        "large-w4a16",
        "broken-quant-random-fc",
    }


def _worst(a: list[dict[str, Any]], b: list[dict[str, Any]]) -> float:
    worst = 0.0
    assert [x["name"] for x in a] == [y["name"] for y in b]
    for x, y in zip(a, b):
        assert {k: v for k, v in x.items() if k not in RELATIVE} == {
            k: v for k, v in y.items() if k not in RELATIVE
        }
        for k in RELATIVE:
            if k in y and x[k] != y[k]:
                worst = max(worst, abs(x[k] - y[k]) / abs(y[k]))
    return worst


def test_numpy_receipts_agree_with_the_torch_path(numpy_cases: dict[str, tuple[Path, Path]]) -> None:
    worst = 0.0
    for name, (d, r) in sorted(numpy_cases.items()):
        fast, ref = diff(d, r), diff(d, r, float_path="torch")
        assert fast.counts == ref.counts and fast.failed() == ref.failed(), name
        assert any(f.verdict == "quantization-noise" for f in fast.figures), name
        worst = max(worst, _worst(fast.to_json()["tensors"], ref.to_json()["tensors"]))
    assert 0 < worst <= np_figures.TOLERANCE  # not the torch path twice: the last bits do differ


def test_cli_diff_of_a_pack_quantized_pair_never_imports_torch(tmp_path: Path) -> None:
    code = (
        "import sys; sys.modules['torch'] = None; from dflash2_ckpt.cli import main; "
        "sys.argv = ['dflash2-ckpt', 'diff', sys.argv[1], '--reference', sys.argv[2], '--format', 'json',"
        " '--receipt', sys.argv[3]]; main()"
    )
    env = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}
    for scheme in ("w4a16", "w8a16"):
        rec = tmp_path / f"{scheme}.json"
        out = subprocess.run(
            [sys.executable, "-c", code, str(FIXTURES / "quantized" / scheme), str(GOOD), str(rec)],
            capture_output=True,
            text=True,
            env=env,
        )
        assert out.returncode == 0, out.stderr
        doc = json.loads(out.stdout)
        assert doc["passed"] and doc["counts"]["quantization-noise"] >= 10
        want = diff(FIXTURES / "quantized" / scheme, GOOD, float_path="torch").to_json()["tensors"]
        assert _worst(json.loads(rec.read_text())["tensors"], want) <= np_figures.TOLERANCE


def test_a_random_fc_is_still_different_without_torch() -> None:
    code = (
        "import sys, json; sys.modules['torch'] = None; from dflash2_ckpt.diff import diff; "
        "r = diff(sys.argv[1], sys.argv[2]); print(json.dumps([r.counts, r.failed()]))"
    )
    env = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}
    out = subprocess.run(
        [sys.executable, "-c", code, str(FIXTURES / "broken" / "quant-random-fc"), str(GOOD)],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    ).stdout
    counts, failed = json.loads(out)
    assert failed and counts["different"] == 1


SCALE_DTYPES = {"F32": torch.float32, "BF16": torch.bfloat16, "F16": torch.float16}


@settings(max_examples=60, deadline=None)
@given(
    bits=st.sampled_from([4, 8]),
    strategy=st.sampled_from(["group", "channel", "tensor"]),
    sdt=st.sampled_from(sorted(SCALE_DTYPES)),
    symmetric=st.booleans(),
    rows32=st.integers(1, 3),
    groups=st.integers(1, 4),
    seed=st.integers(0, 2**31 - 1),
    special=st.sampled_from(["", "nan", "inf", "big"]),
)
def test_decode_is_ct_decodes_bit_for_bit(
    bits: int, strategy: str, sdt: str, symmetric: bool, rows32: int, groups: int, seed: int, special: str
) -> None:
    if strategy == "tensor":
        symmetric = True  # asymmetric tensor scales are refused by both (supported)
    rng = np.random.default_rng(seed)
    rows, gs = 32 * rows32, 32
    cols = gs * groups
    words = rng.integers(-(2**31), 2**31, (rows, cols * bits // 32), dtype=np.int64).astype(np.int32)
    shape = {"group": (rows, groups), "channel": (rows, 1), "tensor": (1,)}[strategy]
    s = (rng.standard_normal(shape) * 10.0 ** rng.integers(-6, 3)).astype(np.float32)
    if special:
        s.reshape(-1)[0] = {"nan": np.nan, "inf": np.inf, "big": 3e38}[special]
    scale = torch.from_numpy(s).to(SCALE_DTYPES[sdt])
    zgroups = shape[-1] if strategy != "tensor" else 1
    zp = (
        None
        if symmetric
        else rng.integers(-(2**31), 2**31, (rows * bits // 32, zgroups), dtype=np.int64).astype(np.int32)
    )
    scheme = Scheme("ct-pack", bits, "int", strategy, gs if strategy == "group" else None, symmetric)
    assert np_figures.supported(scheme, cols, sdt, tuple(scale.shape))
    want = ct_decode.pack(
        torch.from_numpy(words), bits, cols, scale, scheme, None if zp is None else torch.from_numpy(zp)
    )
    stored = scale.view(torch.int16).numpy().view("<u2") if sdt == "BF16" else scale.numpy()
    got = np_figures.pack(words, bits, cols, np_figures.widen(stored, sdt), sdt, strategy, zp)
    assert got.shape == tuple(want.shape)
    w = want.numpy()
    assert np.array_equal(np.isnan(got), np.isnan(w))
    assert np.array_equal(
        np.where(np.isnan(got), 0, got).view(np.uint32), np.where(np.isnan(w), 0, w).view(np.uint32)
    )


@settings(max_examples=40, deadline=None)
@given(stored=st.sampled_from(["BF16", "F16"]), seed=st.integers(0, 2**31 - 1), n=st.integers(1, 5000))
def test_dtype_noise_agrees(stored: str, seed: int, n: int) -> None:
    x = np.random.default_rng(seed).standard_normal(n) * 10.0 ** np.random.default_rng(seed).integers(
        -8, 8, n
    )
    x = x.astype(np.float32)
    x[0] = 0.0
    want = dtype_noise(torch.from_numpy(x), stored, "F32")
    assert math.isclose(dtype_noise_np(x, stored, "F32"), want, rel_tol=np_figures.TOLERANCE)
