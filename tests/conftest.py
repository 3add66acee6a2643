"""Shared test setup: no test may reach the network; paths to the committed fixtures."""
from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest

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
