"""torch's intra-op threads chosen on purpose: --threads, else OMP_NUM_THREADS, else the usable cores less
the load (one when they are busy); diff, accept and smoke report the choice."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from _kit.cli import invoke_cli
from dflash2_ckpt import threads
from dflash2_ckpt.cli import main
from dflash2_ckpt.errors import ConfigError

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"


@pytest.fixture
def machine(monkeypatch):
    def set_(cores: int, load: float | None) -> None:
        monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(cores)), raising=False)
        if load is None:

            def none() -> tuple[float, float, float]:
                raise OSError("no load average")

            monkeypatch.setattr(os, "getloadavg", none)
        else:
            monkeypatch.setattr(os, "getloadavg", lambda: (load, load, load))

    return set_


@pytest.mark.parametrize(
    "cores,load,want",
    [
        (2, 0.0, 2),
        (2, 0.6, 1),
        (2, 0.4, 2),
        (2, 2.0, 1),
        (2, 7.5, 1),
        (8, 3.2, 5),
        (8, 8.0, 1),
        (1, 0.0, 1),
        (4, None, 4),
    ],
)
def test_threads_from_cores_and_load(machine, cores, load, want):
    machine(cores, load)
    c = threads.choose(env={})
    assert (c.threads, c.source, c.usable_cores) == (want, "load", cores)
    if want == 1 and cores > 1:
        assert "contended" in c.reason


def test_requested_then_omp_num_threads_win(machine):
    machine(2, 9.0)
    assert threads.choose(3, env={"OMP_NUM_THREADS": "2"}).to_json()["source"] == "--threads"
    c = threads.choose(env={"OMP_NUM_THREADS": "2"})
    assert (c.threads, c.source, c.reason) == (2, "OMP_NUM_THREADS", "OMP_NUM_THREADS=2")
    assert threads.choose(env={"OMP_NUM_THREADS": "lots"}).source == "load"  # not a count: ignored
    with pytest.raises(ConfigError):
        threads.choose(0)


def test_apply_sets_torch(machine):
    torch = pytest.importorskip("torch")
    before = torch.get_num_threads()
    try:
        assert threads.apply(1).threads == 1 and torch.get_num_threads() == 1
    finally:
        torch.set_num_threads(before)


def test_diff_reports_the_threads_it_used():
    pytest.importorskip("torch")
    pytest.importorskip("compressed_tensors")
    good = FIXTURES / "good" / "nested-v2"
    res = invoke_cli(
        main,
        [
            "diff",
            str(FIXTURES / "quantized" / "w4a16"),
            "-r",
            str(good),
            "--threads",
            "1",
            "--format",
            "json",
        ],
    )
    assert res.exit_code == 0, res.output
    assert json.loads(res.output)["threads"] == {
        **json.loads(res.output)["threads"],
        "threads": 1,
        "source": "--threads",
    }
    text = invoke_cli(main, ["diff", str(good), "-r", str(good), "--threads", "1"])
    assert "1 torch thread(s): --threads=1" in text.output
    bad = invoke_cli(main, ["diff", str(good), "-r", str(good), "--threads", "0"])
    assert bad.exit_code == 2 and "--threads" in bad.output


def test_smoke_reports_the_threads_it_used(monkeypatch):
    pytest.importorskip("torch")
    pytest.importorskip("triton")
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    res = invoke_cli(
        main, ["smoke", str(FIXTURES / "good" / "nested-v2"), "--device", "cpu", "--format", "json"]
    )
    doc = json.loads(res.output)
    assert doc["threads"]["threads"] == 1 and doc["threads"]["source"] == "OMP_NUM_THREADS"
    assert "Triton (interpreted) on a sample" in doc["estimate"]["triton_conv"]
