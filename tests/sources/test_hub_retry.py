"""Transient Hub failures: 429, 503, a reset connection and a short Range answer are retried and verify
passes; when the retries run out the run stops with one typed error (exit 3) within a bounded time."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from _kit.cli import run_output
from _kit.fakehub import FakeHub
from dflash2_ckpt.checkpoint.open_source import open_source
from dflash2_ckpt.errors import HubStatusError, HubUnreachableError, RateLimitedError
from dflash2_ckpt.sources.hub_transport import RetryPolicy
from dflash2_ckpt.usecases.verify import verify

# where each kind of request goes: the listing (API), config.json (whole), the safetensors header (Range, CDN)
TARGETS = {"listing": "/api/models/", "config": "config.json", "header": "/cdn/"}


def run(*args: str) -> tuple[int, str, float]:
    """The kit's run, timed: retries are bounded in time."""
    t0 = time.monotonic()
    code, out = run_output(*args)
    return code, out, time.monotonic() - t0


# every fault on every kind of request it can hit: only Range reads come back short or partial, and
# the fake cuts off JSON answers ("cut"; a file body is cut by "short")
CASES = [(k, w) for k in ("429", "503", "reset") for w in sorted(TARGETS)] + [
    ("cut", "listing"),
    ("short", "header"),
    ("partial", "header"),
]


@pytest.mark.parametrize("kind, where", CASES)
def test_transient_failures_are_retried(hub: FakeHub, ckpts: dict[str, Path], kind: str, where: str) -> None:
    hub.add_commit("org/flaky", ckpts["tiny"])
    fault = hub.inject(kind, TARGETS[where], times=2, retry_after="0" if kind == "429" else None)
    report = verify(open_source("org/flaky"))
    assert fault.times == 0  # both failures were served ...
    assert report.to_json()["findings"] == verify(ckpts["tiny"]).to_json()["findings"]  # ... and got past
    if kind in ("429", "503"):
        assert len([e for e in hub.log if e.status == int(kind)]) == 2


def test_retries_keep_the_bytes_exact(hub: FakeHub, ckpts: dict[str, Path]) -> None:
    hub.add_commit("org/exact", ckpts["27b"])
    hub.inject("short", "/cdn/", times=3)
    src = open_source("org/exact")
    data = src.read_range("model.safetensors", 0, 16 * 1024)
    with open(ckpts["27b"] / "model.safetensors", "rb") as f:
        assert data == f.read(16 * 1024)
    assert len(hub.requests("GET", "/cdn/")) == 4  # three cut short, then the rest


@pytest.mark.parametrize(
    "kind, where, expect, error",
    [
        ("503", "header", "HTTP 503 after 5 attempt(s)", HubStatusError),
        ("503", "listing", "HTTP 503 after 5 attempt(s)", HubStatusError),
        ("reset", "config", "cannot reach", HubUnreachableError),
        ("short", "header", "short read", HubUnreachableError),
        ("429", "header", "rate-limiting", RateLimitedError),
    ],
)
def test_retries_run_out_exit_3_quickly(
    hub: FakeHub, ckpts: dict[str, Path], kind: str, where: str, expect: str, error: type
) -> None:
    hub.add_commit("org/down", ckpts["tiny"])
    hub.inject(kind, TARGETS[where], times=1000)
    with pytest.raises(error) as e:
        verify(open_source("org/down"))
    assert e.value.repo_id == "org/down" and e.value.revision == "main"
    code, out, took = run("verify", "org/down")
    assert code == 3 and expect in out and "hint:" in out, out
    assert (
        "Traceback" not in out and "Retrying in" not in out and "HTTP Error" not in out
    )  # no raw library logs
    assert len(out.strip().splitlines()) == 2  # one line, one hint
    assert took < 10
    # two runs; an attempt may reach the server twice (the client re-sends once on a reset pooled connection)
    assert len([e for e in hub.log if TARGETS[where] in e.path]) <= 2 * 2 * (RetryPolicy().max_retries + 1)


def test_a_long_retry_after_is_not_waited_for(hub: FakeHub, ckpts: dict[str, Path]) -> None:
    hub.add_commit("org/limited", ckpts["tiny"])
    hub.inject("429", "/api/models/", times=1, retry_after="3600")
    t0 = time.monotonic()
    with pytest.raises(RateLimitedError) as e:
        open_source("org/limited")
    assert time.monotonic() - t0 < 2
    assert e.value.retry_after == 3600 and e.value.status == 429 and "3600 s" in e.value.message
    assert "token" in e.value.hint


def test_default_policy_is_bounded() -> None:
    p = RetryPolicy()
    waits = sum(p.wait(i) for i in range(1, p.max_retries + 1))
    assert waits <= 10 and p.deadline <= 120 and p.connect_retries <= 2
    assert p.max_retries >= 3  # enough to ride out a blip


def test_policy_from_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DFLASH2_CKPT_HUB_RETRIES", "2")
    monkeypatch.setenv("DFLASH2_CKPT_HUB_BACKOFF", "0.1")
    monkeypatch.setenv("DFLASH2_CKPT_HUB_DEADLINE", "nonsense")
    p = RetryPolicy.from_env()
    assert p.max_retries == 2 and p.base_wait == 0.1 and p.deadline == RetryPolicy().deadline
    assert [p.wait(i) for i in (1, 2, 3, 4, 5)] == [0.1, 0.2, 0.4, 0.8, 0.8]
