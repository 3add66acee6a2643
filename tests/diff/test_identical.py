"""Bit-identical dense tensors are compared from their bytes (diff/identical.py), with the verdicts and figures
the float path gives: NaN / Inf still make a tensor different, one changed byte anywhere sends the tensor
to the float path, and a diff of identical copies never loads torch."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import FIXTURES  # noqa: E402
from dflash2_ckpt.checkpoint import open_checkpoint
from dflash2_ckpt.dev.synth import materialise
from dflash2_ckpt.diff.identical import CHUNK, finite
from dflash2_ckpt.sources.local import LocalSource

GOOD = FIXTURES / "good" / "nested-v2"
ROOT = Path(__file__).resolve().parents[2]


def _reference_finite(raw: bytes, dtype: str) -> bool:
    """numpy's isfinite on the values the float path widens (BF16: the upper half of a float32)."""
    if dtype == "BF16":
        values = (np.frombuffer(raw, "<u2").astype("<u4") << 16).view("<f4")
    else:
        values = np.frombuffer(raw, {"F16": "<f2", "F32": "<f4"}[dtype])
    return bool(np.isfinite(values).all())


SPECIAL = {
    "BF16": [0x7F80, 0xFF80, 0x7FC0, 0xFFFF, 0x7F7F, 0xFF7F, 0x8000, 0x0001],
    "F16": [0x7C00, 0xFC00, 0x7E00, 0xFFFF, 0x7BFF, 0xFBFF, 0x8000, 0x0001],
    "F32": [0x7F800000, 0xFF800000, 0x7FC00000, 0xFFFFFFFF, 0x7F7FFFFF, 0xFF7FFFFF, 0x80000000, 1],
}


@settings(max_examples=300, deadline=None)
@given(dtype=st.sampled_from(sorted(SPECIAL)), data=st.data())
def test_finite_agrees_with_numpy_isfinite(dtype: str, data: Any) -> None:
    width = 4 if dtype == "F32" else 2
    words = data.draw(
        st.lists(
            st.one_of(st.sampled_from(SPECIAL[dtype]), st.integers(0, (1 << 8 * width) - 1)),
            min_size=1,
            max_size=64,
        )
    )
    raw = np.array(words, dtype=f"<u{width}").tobytes()
    assert finite(raw, dtype) == _reference_finite(raw, dtype)


def _copy_with(out: Path, name: str, edit: Any) -> Path:
    """GOOD with tensor `name`'s stored bytes passed through `edit`."""
    ck, src = open_checkpoint(GOOD), LocalSource(GOOD)
    data = {t.name: src.read_range(t.file, t.begin, t.nbytes) for t in ck.tensors.values()}
    data[name] = edit(bytearray(data[name]))
    config = json.loads((GOOD / "config.json").read_text())
    return materialise(
        out,
        config,
        [(t.name, t.dtype, t.shape) for t in ck.tensors.values()],
        data=lambda n, _: bytes(data[n]),
    )


def _f32_tensor() -> str:
    ck = open_checkpoint(GOOD)
    return max((t for t in ck.tensors.values() if t.dtype == "F32"), key=lambda t: t.nbytes).name


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_nonfinite_in_an_identical_copy_is_still_different(tmp_path: Path, bad: float) -> None:
    pytest.importorskip("torch")
    from dflash2_ckpt.diff import diff

    name = _f32_tensor()

    def poison(b: bytearray) -> bytearray:
        v = np.frombuffer(b, "<f4").copy()
        v[3] = bad
        return bytearray(v.tobytes())

    d = _copy_with(tmp_path / "nan", name, poison)
    fig = next(f for f in diff(d, d).figures if f.name == name)
    assert fig.verdict == "different" and fig.reason == "1 NaN / Inf value(s)"


def test_one_changed_value_goes_to_the_float_path(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    from dflash2_ckpt.diff import diff

    name = _f32_tensor()
    n = open_checkpoint(GOOD).tensors[name].nbytes // 4

    def nudge(b: bytearray) -> bytearray:
        v = np.frombuffer(b, "<f4").copy()
        v[n - 1] += 0.5  # the last value: after every identical chunk before it
        return bytearray(v.tobytes())

    d = _copy_with(tmp_path / "one", name, nudge)
    fig = next(f for f in diff(d, GOOD).figures if f.name == name)
    assert fig.verdict == "different" and fig.max_abs == pytest.approx(0.5, rel=1e-6)
    assert 0 < fig.rel_rms < 1 and fig.cosine < 1  # the float path's sums, not the identical constants
    same = [f for f in diff(d, GOOD).figures if f.name != name]
    assert same and all(f.verdict == "equal" and f.cosine == 1.0 and f.rel_rms == 0.0 for f in same)


def test_large_identical_tensor_spans_several_chunks(tmp_path: Path) -> None:
    ck = open_checkpoint(GOOD)
    assert max(t.nbytes for t in ck.tensors.values()) < CHUNK  # the fixtures fit one chunk; so:
    big = np.random.default_rng(0).standard_normal(CHUNK // 2 + 7).astype("<f4")  # 2 chunks and a tail
    config = json.loads((GOOD / "config.json").read_text())
    tensors = [(t.name, t.dtype, t.shape) for t in ck.tensors.values()] + [("extra.big", "F32", (big.size,))]
    src = LocalSource(GOOD)
    data = {t.name: src.read_range(t.file, t.begin, t.nbytes) for t in ck.tensors.values()}
    data["extra.big"] = big.tobytes()
    a = materialise(tmp_path / "a", config, tensors, data=lambda n, _: data[n])
    big[-1] = np.nan
    data["extra.big"] = big.tobytes()
    b = materialise(tmp_path / "b", config, tensors, data=lambda n, _: data[n])
    code = (
        "import json, sys; from dflash2_ckpt.diff import diff; r = diff(sys.argv[1], sys.argv[2]); "
        "print(json.dumps([r.counts, 'torch' in sys.modules]))"
    )
    run = [sys.executable, "-c", code]
    env = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}
    out = subprocess.run(run + [str(a), str(a)], capture_output=True, text=True, env=env, check=True).stdout
    assert json.loads(out) == [{"equal": len(tensors)}, False]  # identical copies: torch never loads
    if pytest.importorskip("torch"):
        out = subprocess.run(
            run + [str(b), str(b)], capture_output=True, text=True, env=env, check=True
        ).stdout
        assert json.loads(out) == [{"different": 1, "equal": len(tensors) - 1}, True]  # the NaN in the tail


def test_without_torch_a_copy_passes_and_a_change_names_the_extra(tmp_path: Path) -> None:
    name = _f32_tensor()

    def nudge(b: bytearray) -> bytearray:
        v = np.frombuffer(b, "<f4").copy()
        v[0] += 1.0
        return bytearray(v.tobytes())

    changed = _copy_with(tmp_path / "changed", name, nudge)
    code = (
        "import sys; sys.modules['torch'] = None; from dflash2_ckpt.cli import main; "
        "sys.argv = ['dflash2-ckpt', 'diff', sys.argv[1], '--reference', sys.argv[2], '--format', 'json']; main()"
    )
    env = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}
    ok = subprocess.run(
        [sys.executable, "-c", code, str(GOOD), str(GOOD)], capture_output=True, text=True, env=env
    )
    assert ok.returncode == 0 and json.loads(ok.stdout)["passed"] is True
    bad = subprocess.run(
        [sys.executable, "-c", code, str(changed), str(GOOD)], capture_output=True, text=True, env=env
    )
    assert bad.returncode == 3 and "Traceback" not in bad.stderr
    err = json.loads(bad.stdout)["error"]
    assert err["type"] == "MissingDependencyError" and "dflash2-ckpt[diff]" in err["hint"]
