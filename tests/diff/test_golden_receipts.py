"""diff's receipts are those of the diff before the fused, cache-sized passes (commit 7aaf2fd), for every
scheme it reads: fixtures/diff-golden.json was written by fixtures/diff_golden.py at that commit. The derived
files are rebuilt here; their sha256 in the receipt proves they are the bytes the old diff saw. Verdicts,
counts, hashes and shapes are equal, and so are the figures of every tensor that fits one pass (64 Ki values),
to the last bit. A larger tensor's sums are now float32 dot products over 64 Ki-value slices added in float64,
where the old diff took one float32 dot over its whole 8 MiB chunk: that old figure carries its own float32
rounding (about 3e-5 relative at 10^6 values, measured on large-bf16), so those agree to 1e-4. A pack-quantized
pair's figures are numpy's (diff/np_figures.py), whose dots differ from torch's in the last bits: within
np_figures.TOLERANCE for tensors of one pass."""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("torch")
pytest.importorskip("compressed_tensors")

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
sys.path.insert(0, str(FIXTURES))
import diff_golden  # noqa: E402
from dflash2_ckpt.diff import _numpy_pair  # noqa: E402
from dflash2_ckpt.diff.np_figures import TOLERANCE  # noqa: E402
from dflash2_ckpt.diff.sides import open_side  # noqa: E402

GOLDEN = json.loads((FIXTURES / "diff-golden.json").read_text())["cases"]
FIGURES = ("cosine", "max_abs_error", "relative_rms_error", "predicted_relative_rms_error")


@pytest.fixture(scope="module")
def cases(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, Path]]:
    return {name: (d, r) for name, d, r in diff_golden.build(tmp_path_factory.mktemp("golden"))}


def _same(a: Any, b: Any, exact: bool, rel_tol: float = 1e-4) -> bool:
    if isinstance(a, float) or isinstance(b, float):
        if exact:
            return a == b
        return math.isclose(a, b, rel_tol=rel_tol, abs_tol=1e-12)
    return a == b


def test_every_golden_case_is_built(cases: dict[str, tuple[Path, Path]]) -> None:
    assert set(cases) == set(GOLDEN)


@pytest.mark.parametrize("name", sorted(GOLDEN))
def test_receipt_is_the_old_diffs(name: str, cases: dict[str, tuple[Path, Path]]) -> None:
    want = GOLDEN[name]
    got = json.loads(json.dumps(diff_golden.receipt_of(*cases[name])))
    assert got["derived"] == want["derived"] and got["reference"] == want["reference"]  # the same bytes
    assert got["counts"] == want["counts"] and got["passed"] == want["passed"]
    small = not name.startswith("large-")
    numpy = _numpy_pair(open_side(cases[name][0]), open_side(cases[name][1]))
    assert len(got["tensors"]) == len(want["tensors"])
    for g, w in zip(got["tensors"], want["tensors"]):
        assert {k: v for k, v in g.items() if k not in FIGURES} == {
            k: v for k, v in w.items() if k not in FIGURES
        }
        for k in FIGURES:
            if k in w:
                exact = small and not (numpy and k != "max_abs_error")  # numpy's max abs error is exact
                assert _same(g[k], w[k], exact, TOLERANCE if numpy else 1e-4), (g["name"], k, g[k], w[k])
