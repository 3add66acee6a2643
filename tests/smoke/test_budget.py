"""Smoke at real size: the estimate before the run, the refusal above --max-memory (nothing allocated),
--layers / --requests, and a progress callback for terminals."""

from __future__ import annotations

import json
import resource
import time
from pathlib import Path

import pytest

pytest.importorskip("torch")
pytest.importorskip("triton")

from _kit.cli import invoke_cli  # noqa: E402
from dflash2_ckpt.checkpoint import open_checkpoint  # noqa: E402
from dflash2_ckpt.cli import main  # noqa: E402
from dflash2_ckpt.cli.smoke import parse_size  # noqa: E402
from dflash2_ckpt.dev.synth import materialise, read_tensor_list  # noqa: E402
from dflash2_ckpt.errors import BudgetError  # noqa: E402
from dflash2_ckpt.smoke import run_smoke  # noqa: E402
from dflash2_ckpt.smoke.budget import estimate, machine_budget  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
REAL = ROOT / "fixtures" / "real"
GOOD = ROOT / "fixtures" / "good"


@pytest.fixture(scope="module")
def real27b(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The published Qwen3.8-27B-DFlash2 layout, data left as holes (3.85 GB that take no disk)."""
    d = tmp_path_factory.mktemp("q27") / "drafter"
    cfg = json.loads((REAL / "z-lab_Qwen3.8-27B-DFlash2.config.json").read_text())
    materialise(d, cfg, read_tensor_list(REAL / "z-lab_Qwen3.8-27B-DFlash2.tensors.tsv"))
    return d


def test_estimate_matches_the_published_tensor_bytes(real27b: Path) -> None:
    spec = open_checkpoint(real27b).spec
    assert spec is not None
    est = estimate(spec, requests=2, block=8)
    stored = sum(
        n
        for *_, n in (
            line.split("\t")
            for line in (REAL / "z-lab_Qwen3.8-27B-DFlash2.tensors.tsv").read_text().splitlines()
            if line and not line.startswith("#")
        )
        for n in [int(n)]
    )
    assert est.parts["drafter parameters (float32)"] == stored * 2  # BF16 -> F32
    assert est.parts["embedding and head (float32)"] == 2 * 248320 * 5120 * 4
    assert est.peak_bytes > 17 * 2**30 and est.seconds > 0
    assert estimate(spec, requests=1, block=8).peak_bytes < est.peak_bytes
    fewer = spec.with_(num_hidden_layers=1, layer_types=spec.layer_types[:1])
    assert (
        estimate(fewer, requests=2, block=8).parts["drafter parameters (float32)"]
        < est.parts["drafter parameters (float32)"] / 2
    )


def test_refusal_allocates_nothing(real27b: Path) -> None:
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    t0 = time.perf_counter()
    with pytest.raises(BudgetError) as e:
        run_smoke(real27b, max_memory=8 * 2**30, device="cpu")
    assert time.perf_counter() - t0 < 30
    grown_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
    assert grown_kib < 512 * 1024  # < 0.5 GiB, nothing loaded
    msg = str(e.value) + e.value.hint
    assert "8.0 GiB budget" in msg and "--device cuda" in msg and "--layers" in msg and "--requests 1" in msg


def test_default_budget_is_a_fraction_of_this_machine() -> None:
    import os

    total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    assert machine_budget("cpu") == int(total * 0.5)


def test_cli_refuses_with_the_next_steps(real27b: Path) -> None:
    res = invoke_cli(main, ["smoke", str(real27b), "--max-memory", "8G", "--device", "cpu"])
    assert res.exit_code == 3
    assert "nothing was loaded" in res.output and "--layers" in res.output
    assert "smoke:" not in res.output  # no progress bar off a terminal


@pytest.mark.parametrize(
    "text, n",
    [("16G", 16 * 2**30), ("800M", 800 * 2**20), ("1.5GiB", int(1.5 * 2**30)), ("4096", 4096), ("2k", 2048)],
)
def test_parse_size(text: str, n: int) -> None:
    assert parse_size(text) == n


def test_layers_and_progress() -> None:
    seen: list[tuple[str, int, int]] = []
    r = run_smoke(
        GOOD / "nested-v2",
        layers=1,
        requests=1,
        device="cpu",
        progress=lambda s, d, t: seen.append((s, d, t)),
    )
    codes = [f.code for f in r.findings]
    assert "DF716" in codes and "DF701" not in codes and "DF702" not in codes and r.passed
    assert r.inputs["requests"] == 1 and r.estimate["peak_bytes"] > 0
    assert seen[0][0].startswith("estimated ") and seen[0][2] == 0  # the estimate comes first
    stages = seen[1:]
    assert [s for s, *_ in stages][:3] == ["load", "embedding", "forward"]
    assert [d for _, d, _ in stages] == sorted(d for _, d, _ in stages) and all(d < t for _, d, t in stages)


# VmHWM is the high-water mark of this process's own memory map; ru_maxrss would not do here, because
# Linux carries it across exec from the forking parent, so a child of a large pytest process reports its size
MEASURE = """
import json, re, sys
from dflash2_ckpt.smoke import run_smoke
r = run_smoke(sys.argv[1], device="cpu")
hwm = int(re.search(r"VmHWM:\\s+(\\d+) kB", open("/proc/self/status").read()).group(1))
print(json.dumps({"estimate": r.estimate["peak_bytes"], "peak": hwm * 1024}))
"""


def test_estimate_bounds_a_measured_run(tmp_path: Path) -> None:
    """A mid-size drafter (H 512, vocab 32,000) in a fresh process: the peak RSS stays under the estimate,
    and the estimate is not inflated past twice the peak."""
    import importlib.util
    import os
    import subprocess
    import sys

    import numpy as np

    spec_ = importlib.util.spec_from_file_location("fixture_build", ROOT / "fixtures" / "build.py")
    assert spec_ is not None and spec_.loader is not None
    b = importlib.util.module_from_spec(spec_)
    spec_.loader.exec_module(b)
    cfg = b.nested("v2")
    cfg.update(
        hidden_size=512,
        intermediate_size=1536,
        vocab_size=32000,
        num_attention_heads=8,
        num_key_value_heads=2,
        head_dim=64,
    )
    cfg["dflash_config"].update(mask_token_id=31999, selector_rank=64)
    rng = np.random.default_rng(0)
    materialise(
        tmp_path / "d",
        cfg,
        b.layout(cfg),
        data=lambda n, k: (0.02 * rng.standard_normal(k // 4)).astype("<f4").tobytes(),
    )
    out = subprocess.run(
        [sys.executable, "-c", MEASURE, str(tmp_path / "d")],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        timeout=600,
        check=True,
    )
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert got["peak"] <= got["estimate"] <= 2 * got["peak"], got
