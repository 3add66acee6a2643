"""Reduced-vocabulary v1 drafters: the drafter's own head and its d2t / t2d maps are recognised, checked
against draft_vocab_size and the target vocabulary (values under --scan), and DFlash2 still refuses them."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import FIXTURES
from dflash2_ckpt import verify
from dflash2_ckpt.convert import convert
from dflash2_ckpt.dev.synth import materialise
from dflash2_ckpt.errors import ConversionError

_spec = importlib.util.spec_from_file_location("fixture_build", FIXTURES / "build.py")
assert _spec is not None and _spec.loader is not None
build = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(build)

GOOD = FIXTURES / "good" / "flat-v1-reduced-vocab"
TARGET = FIXTURES / "targets" / "tiny-target"


def codes(d: Path, **kw: object) -> list[str]:
    return [f.code for f in verify(d, **kw).findings]  # type: ignore[arg-type]


def with_maps(tmp: Path, d2t: np.ndarray, t2d: np.ndarray) -> Path:
    cfg = build.reduced_vocab(build.flat("v1"))
    tensors = build.reduced_vocab_layout(build.flat("v1"))
    base = build.data_for(tensors)
    data = {"d2t": d2t.astype("<i8").tobytes(), "t2d": t2d.astype(np.uint8).tobytes()}
    materialise(tmp, cfg, tensors, data=lambda n, k: data.get(n) or base(n, k))
    return tmp


def test_own_head_is_not_called_a_target_copy() -> None:
    r = verify(GOOD)
    got = [f.code for f in r.findings]
    assert got == ["DF212"] and "DF207" not in got and "DF210" not in got
    assert r.findings[0].details == {"draft_vocab_size": build.DRAFT_V, "vocab_size": build.V}


def test_without_scan_only_d2t_is_read() -> None:
    plain, scanned = verify(GOOD), verify(GOOD, scan=True)
    assert scanned.bytes_read > plain.bytes_read
    assert plain.bytes_read < (GOOD / "model.safetensors").stat().st_size // 4


def test_consistent_maps_pass_the_scan_with_the_target() -> None:
    assert "DF216" not in codes(GOOD, scan=True, target=TARGET)


def test_map_outside_the_target_vocab(tmp_path: Path) -> None:
    d2t = np.arange(build.DRAFT_V)
    d2t[-1] = build.V  # draft id 31 -> 31 + 64: past the end
    t2d = np.zeros(build.V)
    t2d[0 : 2 * build.DRAFT_V : 2] = 1
    d = with_maps(tmp_path / "out", d2t, t2d)
    assert "DF218" in codes(d)  # d2t is read on every verify
    assert "DF216" not in codes(d, scan=True)  # t2d is not compared with a d2t that is wrong itself


def test_target_smaller_than_the_maps_reach(tmp_path: Path) -> None:
    small = tmp_path / "target"
    small.mkdir()
    cfg = json.loads((TARGET / "config.json").read_text())
    (small / "config.json").write_text(json.dumps(dict(cfg, vocab_size=build.V - 4)))
    found = codes(GOOD, scan=True, target=small)
    assert "DF501" in found and "DF218" in found  # even ids up to 62 are not all inside 60


@settings(max_examples=25, deadline=None)
@given(st.permutations(list(range(build.V))))
def test_maps_agree_iff_d2t_hits_exactly_the_kept_ids(
    tmp_path_factory: pytest.TempPathFactory, perm: list[int]
) -> None:
    chosen = np.array(sorted(perm[: build.DRAFT_V]))
    d2t = chosen - np.arange(build.DRAFT_V)
    t2d = np.zeros(build.V)
    t2d[chosen] = 1
    good = with_maps(tmp_path_factory.mktemp("ok"), d2t, t2d)
    assert "DF216" not in codes(good, scan=True)
    t2d[perm[build.DRAFT_V]] = 1  # one id kept that no draft id reaches
    bad = with_maps(tmp_path_factory.mktemp("bad"), d2t, t2d)
    assert "DF216" in codes(bad, scan=True)


@pytest.mark.parametrize(
    "name, code",
    [
        ("vocab-map-wrong-dtype", "DF213"),
        ("vocab-maps-missing", "DF214"),
        ("draft-vocab-too-large", "DF215"),
        ("draft-head-wrong-shape", "DF217"),
    ],
)
def test_broken_maps(name: str, code: str) -> None:
    assert code in codes(FIXTURES / "broken" / name)


def test_dflash2_still_requires_the_full_vocabulary() -> None:
    r = verify(FIXTURES / "broken" / "draft-vocab-mismatch")
    assert "DF111" in [f.code for f in r.findings] and "DF212" not in [f.code for f in r.findings]


def test_nested_conversion_refuses_a_reduced_vocabulary(tmp_path: Path) -> None:
    with pytest.raises(ConversionError, match="reduced draft vocabulary"):
        convert(GOOD, tmp_path / "n", to="nested")


def test_smoke_drafts_through_the_own_head_and_d2t() -> None:
    pytest.importorskip("torch")
    pytest.importorskip("triton")
    from dflash2_ckpt.smoke import run_smoke

    r = run_smoke(GOOD, device="cpu")
    assert r.passed, r.findings
    assert r.embedding_source["lm_head"].startswith("checkpoint (the drafter's own")
    drafted = [t for p in r.paths for t in p["greedy"]]
    # d2t sends draft id i to target id 2i: every drafted token is an even id of the target vocabulary
    assert drafted and all(t % 2 == 0 and 0 <= t < 2 * build.DRAFT_V for t in drafted)
