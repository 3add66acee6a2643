"""Shared test setup: no test may reach the network; paths to the committed fixtures; a record of
every finding code the suite produces (tests/checks/test_registry.py checks it after a full run)."""

from __future__ import annotations

import importlib.util
import json
import os
import socket
import sys
from pathlib import Path

import pytest

from dflash2_ckpt.findings import Finding

# Triton fixes interpreted vs compiled mode at its first import, and several packages import it
# (compressed-tensors, torch's compile stack): choose once, here, before any test module is collected,
# so every test that runs a kernel (smoke, accept, quant, reduced vocabularies) gets the interpreter on
# a machine without CUDA, whichever file or subset is run.
if importlib.util.find_spec("torch") is not None and importlib.util.find_spec("triton") is not None:
    import torch

    if not torch.cuda.is_available():
        os.environ.setdefault("TRITON_INTERPRET", "1")

ROOT_TESTS = Path(__file__).resolve().parent
PRODUCED = pytest.StashKey[set]()
FULL_RUN = pytest.StashKey[bool]()  # the whole suite is collected: the produced-codes check may judge
LAST = "test_every_registered_code_is_produced"
DEFAULT_MARKS = "not slow"


# the fake Hub and its checkpoints, for the tests of every package that reads a Hub repo
from _kit.hub_fixtures import ckpts, hub, no_network, offline  # noqa: F401,E402  (fixtures, used by name)


def pytest_configure(config: pytest.Config) -> None:
    # every Finding the package builds in this process, for any test or fixture, adds its code; one a
    # test writes itself proves nothing about the package, so the caller must be package code
    produced: set[str] = set()
    config.stash[PRODUCED] = produced
    original = Finding.__post_init__

    def recording(self: Finding) -> None:
        original(self)
        caller = sys._getframe(2).f_globals.get("__name__", "")  # 0 here, 1 the dataclass __init__
        if caller.startswith("dflash2_ckpt."):
            produced.add(self.code)

    Finding.__post_init__ = recording  # type: ignore[method-assign]
    config.add_cleanup(lambda: setattr(Finding, "__post_init__", original))


def pytest_collection_modifyitems(
    session: pytest.Session, config: pytest.Config, items: list[pytest.Item]
) -> None:
    # the coverage check reads what every other test produced, so it runs last
    items.sort(key=lambda item: item.name == LAST)
    whole = all(Path(a.split("::")[0]).resolve() in (ROOT_TESTS, ROOT_TESTS.parent) for a in config.args)
    # `-m 'not slow'` is the default (pyproject addopts): the slow tests run the CLI in child processes,
    # whose findings are never recorded here, so leaving them out narrows nothing
    narrowed = (
        config.option.keyword
        or config.option.markexpr not in ("", DEFAULT_MARKS)
        or config.option.deselect
        or config.option.ignore
        or config.option.ignore_glob
    )
    config.stash[FULL_RUN] = whole and not narrowed


@pytest.fixture
def produced_codes(request: pytest.FixtureRequest) -> set[str]:
    """Codes produced so far in this session; a full run only, otherwise the test that asks is skipped."""
    if not request.config.stash.get(FULL_RUN, False):
        pytest.skip("needs the whole suite (pytest from the repository root without -k / -m / --deselect)")
    return request.config.stash[PRODUCED]


ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"
REAL = FIXTURES / "real"


@pytest.fixture(autouse=True)
def _no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    real_connect = socket.socket.connect

    def guarded(self: socket.socket, address: object) -> object:
        host = address[0] if isinstance(address, tuple) else address
        if self.family in (socket.AF_INET, socket.AF_INET6) and host not in ("127.0.0.1", "::1", "localhost"):
            raise RuntimeError(f"test tried to reach the network: {address!r}")
        return real_connect(self, address)  # type: ignore[arg-type]

    monkeypatch.setattr(socket.socket, "connect", guarded)


def real_config(name: str) -> dict:
    return json.loads((REAL / f"{name}.config.json").read_text())


@pytest.fixture
def fixtures_dir() -> Path:
    return FIXTURES
