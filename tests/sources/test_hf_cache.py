"""Hugging Face cache snapshots: `snapshot_download` keeps each file as a link into the same cache
repository's blobs/; every command reads such a folder, and a link anywhere else is still refused.

The cache is built by huggingface_hub itself, downloading from the fake Hub into a temporary HF_HOME.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from _kit.cli import invoke
from _kit.fakehub import FakeHub
from conftest import FIXTURES

TARGET = FIXTURES / "targets" / "tiny-target"


def download(hub: FakeHub, repo: str, files: Path) -> Path:
    """Each file through hf_hub_download, which lays the cache out as snapshot_download does."""
    from huggingface_hub import hf_hub_download

    hub.add_commit(repo, files)
    paths = {Path(hf_hub_download(repo, f.name)).parent for f in sorted(files.iterdir()) if f.is_file()}
    [snapshot] = paths
    return snapshot


@pytest.fixture
def snapshot(hub: FakeHub) -> Path:
    path = download(hub, "org/drafter", FIXTURES / "good" / "nested-v2")
    assert "snapshots" in path.parts and (path / "config.json").is_symlink()  # the layout is the real one
    assert (path / "model.safetensors").resolve().parent.name == "blobs"
    return path


def test_verify_inspect_and_compat_read_a_cache_snapshot(snapshot: Path) -> None:
    r = invoke("verify", str(snapshot), "--format", "json")
    assert r.exit_code == 0, r.output
    codes = {f["code"] for f in json.loads(r.output)["findings"]}
    assert "DF607" not in codes
    assert invoke("inspect", str(snapshot)).exit_code == 0
    doc = json.loads(invoke("compat", str(snapshot), "--format", "json").output)
    assert ("vllm", ">=0.34", "loads") in {(e["engine"], e["versions"], e["verdict"]) for e in doc["engines"]}


def test_convert_reads_a_cache_snapshot(snapshot: Path, tmp_path: Path) -> None:
    r = invoke(
        "convert", str(snapshot), "--to", "flat", "-o", str(tmp_path / "flat"), "--target", str(TARGET)
    )
    assert r.exit_code == 0, r.output
    assert invoke("verify", str(tmp_path / "flat")).exit_code == 0


def test_a_cached_target_is_read(hub: FakeHub, snapshot: Path) -> None:
    target = download(hub, "org/target", TARGET)
    assert (target / "config.json").is_symlink()
    r = invoke("verify", str(snapshot), "--target", str(target), "--format", "json")
    assert r.exit_code == 0, r.output
    assert "DF508" not in {f["code"] for f in json.loads(r.output)["findings"]}


def test_a_link_out_of_the_cache_repository_is_still_refused(
    hub: FakeHub, snapshot: Path, tmp_path: Path
) -> None:
    other = download(hub, "org/other", FIXTURES / "good" / "nested-v1")
    outside = tmp_path / "elsewhere.safetensors"
    outside.write_bytes((snapshot / "model.safetensors").read_bytes())
    for i, to in enumerate([outside, (other / "model.safetensors").resolve()]):
        link = snapshot / "model.safetensors"
        link.unlink()
        os.symlink(to, link)
        r = invoke("verify", str(snapshot), "--format", "json")
        assert r.exit_code == 1, (i, r.output)
        assert "DF607" in {f["code"] for f in json.loads(r.output)["findings"]}, i
