"""The Hub fixtures every test may use (tests/conftest.py registers them): a fake Hub on 127.0.0.1 per
test (`hub`), the real huggingface_hub client pointed at it, `offline`, the `ckpts` checkpoints, no network.

huggingface_hub reads HF_ENDPOINT / HF_HOME at import time, and it may already be imported by the
time a fixture runs, so both the environment and the constants module are patched; dflash2_ckpt.hub
reads the environment again at call time, so either alone would do for it, but not for the client.
"""

from __future__ import annotations

import json
import shutil
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from _kit.fakehub import FakeHub
from dflash2_ckpt.dev.synth import materialise, read_tensor_list

ROOT = Path(__file__).resolve().parents[2]
REAL = ROOT / "fixtures" / "real" if (ROOT / "fixtures" / "real").is_dir() else Path("/work/shared/real")
FIXTURES = ROOT / "fixtures"
_LOOPBACK = {"127.0.0.1", "::1", "localhost"}


@pytest.fixture(autouse=True)
def no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    """Any connection to a non-loopback address fails the test, whatever library makes it."""
    real_connect, real_connect_ex = socket.socket.connect, socket.socket.connect_ex

    def check(sock: socket.socket, address: Any) -> None:
        if sock.family in (socket.AF_INET, socket.AF_INET6) and address[0] not in _LOOPBACK:
            raise AssertionError(f"test tried to reach the network: {address!r}")

    def connect(self: socket.socket, address: Any) -> None:
        check(self, address)
        return real_connect(self, address)

    def connect_ex(self: socket.socket, address: Any) -> int:
        check(self, address)
        return real_connect_ex(self, address)

    monkeypatch.setattr(socket.socket, "connect", connect)
    monkeypatch.setattr(socket.socket, "connect_ex", connect_ex)


def point_client_at(monkeypatch: pytest.MonkeyPatch, endpoint: str, home: Path) -> None:
    from huggingface_hub import constants
    from huggingface_hub.utils import _http

    for var in (
        "HF_TOKEN",
        "HUGGING_FACE_HUB_TOKEN",
        "HF_HUB_OFFLINE",
        "TRANSFORMERS_OFFLINE",
        "HF_HUB_CACHE",
        "HUGGINGFACE_HUB_CACHE",
        "HF_OIDC_RESOURCE",
    ):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("HF_ENDPOINT", endpoint)
    monkeypatch.setenv("HF_HOME", str(home))
    monkeypatch.setenv("HF_HUB_DISABLE_TELEMETRY", "1")
    # short backoff: retry tests stay fast; the retry counts are the defaults users get
    monkeypatch.setenv("DFLASH2_CKPT_HUB_BACKOFF", "0.01")
    monkeypatch.setenv("DFLASH2_CKPT_HUB_TIMEOUT", "5")
    monkeypatch.setattr(constants, "ENDPOINT", endpoint)
    monkeypatch.setattr(
        constants, "HUGGINGFACE_CO_URL_TEMPLATE", endpoint + "/{repo_id}/resolve/{revision}/{filename}"
    )
    monkeypatch.setattr(constants, "HF_HOME", str(home))
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(home / "hub"))
    monkeypatch.setattr(constants, "HF_TOKEN_PATH", str(home / "token"))
    monkeypatch.setattr(constants, "HF_STORED_TOKENS_PATH", str(home / "stored_tokens"))
    monkeypatch.setattr(constants, "AGENT_HARNESSES_PATH", str(home / ".agent_harnesses.json"))
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
    _http.close_session()  # no pooled connection to a previous test's server


@pytest.fixture
def hub(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[FakeHub]:
    with FakeHub(tokens={"hf_granted", "hf_other"}) as server:
        point_client_at(monkeypatch, server.url, tmp_path / "hf-home")
        yield server
    from huggingface_hub.utils import _http

    _http.close_session()


@pytest.fixture
def offline(monkeypatch: pytest.MonkeyPatch) -> None:
    from huggingface_hub import constants

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)


def _real(stem: str) -> tuple[dict[str, Any], list[Any]]:
    return (
        json.loads((REAL / f"{stem}.config.json").read_text()),
        read_tensor_list(REAL / f"{stem}.tensors.tsv"),
    )


def _seeded(name: str, nbytes: int) -> bytes:
    # deterministic, non-zero weights so the Hub copy and the local copy are provably the same bytes
    import hashlib

    out = bytearray()
    i = 0
    while len(out) < nbytes:
        out += hashlib.sha256(f"{name}:{i}".encode()).digest()
        i += 1
    return bytes(out[:nbytes])


@pytest.fixture(scope="session")
def ckpts(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Checkpoints on disk: tiny ones with data, the 27B layout sparse, and the repo's good fixtures."""
    root = tmp_path_factory.mktemp("ckpts")
    cfg, ts = _real("speculators-0.9.0_tiny-dflash2")
    out = {
        "tiny": materialise(root / "tiny", cfg, ts, data=_seeded),
        "tiny-sharded": materialise(root / "tiny-sharded", cfg, ts, shards=2, data=_seeded),
    }
    broken = materialise(
        root / "tiny-broken", cfg, [t for t in ts if not t[0].startswith("layers.1.mlp.up")], data=_seeded
    )
    out["tiny-broken"] = broken
    cfg27, ts27 = _real("z-lab_Qwen3.8-27B-DFlash2")
    out["27b"] = materialise(root / "27b", cfg27, ts27)  # sparse: real header, 3.8 GB hole
    for name in ("nested-v2", "flat-v2", "nested-v1", "flat-v1"):
        if (FIXTURES / "good" / name / "config.json").is_file():
            out[name] = FIXTURES / "good" / name
    return out


def layout(tmp: Path, ckpts: dict[str, Path], drafters: list[str], *, root_drafter: bool = False) -> Path:
    """A target-shaped root (its config.json, a stand-in weight file) with drafters in subfolders."""
    d = tmp / "repo"
    d.mkdir()
    if root_drafter:
        for p in ckpts["tiny"].iterdir():
            shutil.copy(p, d / p.name)
    else:
        shutil.copy(FIXTURES / "targets" / "tiny-target" / "config.json", d / "config.json")
        (d / "model.safetensors").write_bytes(b"\x08\x00\x00\x00\x00\x00\x00\x00{}      ")
    for sub in drafters:
        shutil.copytree(ckpts["tiny"], d / sub)
    (d / "docs").mkdir()
    (d / "docs" / "config.json").write_text(json.dumps({"model_type": "something-else"}))  # not a drafter
    return d
