"""HubSource against the fake Hub: same report as local, Range reads only, pinning, subfolders, offline."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from _kit.fakehub import FakeHub
from dflash2_ckpt.checkpoint import open_checkpoint
from dflash2_ckpt.checkpoint.open_source import open_source
from dflash2_ckpt.errors import OfflineNotCachedError, RepositoryNotFoundError, SourceError
from dflash2_ckpt.sources import LocalSource
from dflash2_ckpt.sources.hub import HubSource, RepoRef, parse_repo_ref
from dflash2_ckpt.usecases.verify import verify


def same_report(a, b) -> None:
    ja, jb = a.to_json(), b.to_json()
    assert ja["findings"] == jb["findings"]
    assert ja["summary"] == jb["summary"]
    assert ja["counts"] == jb["counts"] and ja["passed"] == jb["passed"]
    assert a.bytes_read == b.bytes_read


@pytest.mark.parametrize(
    "name", ["tiny", "tiny-sharded", "tiny-broken", "27b", "nested-v2", "flat-v2", "nested-v1", "flat-v1"]
)
def test_repo_and_local_give_the_same_report(hub: FakeHub, ckpts: dict[str, Path], name: str) -> None:
    if name not in ckpts:
        pytest.skip(f"fixture {name} not built")
    sha = hub.add_commit(f"org/{name}", ckpts[name])
    remote = verify(open_source(f"org/{name}"))
    same_report(remote, verify(ckpts[name]))
    assert remote.extra["commit_sha"] == sha
    assert remote.extra["revision"] == "main"
    assert remote.extra["bytes_fetched"] > 0
    assert remote.subject == f"org/{name}"


def test_header_reads_are_ranged_and_small(hub: FakeHub, ckpts: dict[str, Path]) -> None:
    d = ckpts["27b"]
    hub.add_commit("org/big", d)
    report = verify(open_source("org/big"))
    with open(d / "model.safetensors", "rb") as f:
        header = 8 + int.from_bytes(f.read(8), "little")
    config = (d / "config.json").stat().st_size
    assert hub.file_bytes() <= config + max(header, 16 * 1024)  # config + one readahead of the header
    assert hub.file_bytes() < 64 * 1024
    assert report.extra["bytes_fetched"] == hub.file_bytes()
    weights = [e for e in hub.log if e.path.endswith(".safetensors") and e.method == "GET"]
    assert weights and all(e.range for e in weights)  # never an open-ended GET of the weights
    assert all(e.status in (206, 302) for e in weights)


def test_a_long_header_is_read_past_the_readahead(hub: FakeHub, tmp_path: Path) -> None:
    from dflash2_ckpt.dev.synth import materialise

    cfg = json.loads(
        (Path(__file__).parents[2] / "fixtures/real/z-lab_Qwen3.8-27B-DFlash2.config.json").read_text()
    )
    tensors = [(f"extra.{i:04d}.weight", "BF16", (4,)) for i in range(600)]  # ~40 KiB of header
    d = materialise(tmp_path / "long", cfg, tensors)
    hub.add_commit("org/long", d)
    same_report(verify(open_source("org/long")), verify(d))


def test_revision_pinning(hub: FakeHub, ckpts: dict[str, Path]) -> None:
    good = hub.add_commit("org/pin", ckpts["tiny"], ref="v1.0")
    hub.add_commit("org/pin", ckpts["tiny-broken"], ref="main")
    assert not verify(open_source("org/pin@v1.0")).failed()
    assert verify(open_source("org/pin", revision="v1.0")).extra["commit_sha"] == good
    assert verify(open_source(f"org/pin@{good}")).extra["commit_sha"] == good
    assert verify(open_source("org/pin")).failed()

    # resolved once: a branch that moves mid-run does not change what is read
    src = open_source("org/pin@v1.0")
    hub.add_commit("org/pin", ckpts["tiny-broken"], ref="v1.0")
    before = len(hub.log)
    assert not verify(src).failed()
    reads = [e.path for e in hub.log[before:] if "/resolve/" in e.path or e.path.startswith("/cdn/")]
    assert reads and all(good in p for p in reads)


def test_pr_revision_keeps_its_slashes(hub: FakeHub, ckpts: dict[str, Path]) -> None:
    sha = hub.add_commit("org/pr", ckpts["tiny"], ref="refs/pr/1")
    assert verify(open_source("org/pr@refs/pr/1")).extra["commit_sha"] == sha


def test_subfolder(hub: FakeHub, ckpts: dict[str, Path]) -> None:
    hub.add_commit("org/target-with-drafter", {"config.json": b'{"model_type": "qwen3"}', "README.md": b"hi"})
    sha = hub.add_commit("org/target-with-drafter", ckpts["tiny"], prefix="dflash/")
    for src in (
        open_source("org/target-with-drafter", subfolder="dflash"),
        open_source("org/target-with-drafter/dflash"),
    ):
        report = verify(src)
        same_report(report, verify(ckpts["tiny"]))
        assert report.extra["subfolder"] == "dflash" and report.extra["commit_sha"] == sha
    # the root is the target: the one drafter subfolder is found, and the report says so
    found = verify(open_source("org/target-with-drafter"))
    assert found.extra["subfolder"] == "dflash"
    assert [f.code for f in found.findings if f.code == "DF612"] == ["DF612"]
    assert [f for f in found.findings if f.code != "DF612"] == list(verify(ckpts["tiny"]).findings)


def test_not_safetensors_names_the_subfolder(hub: FakeHub, ckpts: dict[str, Path]) -> None:
    hub.add_commit(
        "org/drafter-root",
        {
            "config.json": (ckpts["tiny"] / "config.json").read_bytes(),
            "pytorch_model.bin": b"x",
            "old/model.safetensors": b"x",
        },
    )
    with pytest.raises(SourceError) as e:
        open_source("org/drafter-root")
    assert "not a safetensors checkpoint" in e.value.message and "--subfolder old" in e.value.hint


def test_offline_uses_the_cache_and_says_what_is_missing(
    hub: FakeHub, ckpts: dict[str, Path], monkeypatch: pytest.MonkeyPatch, offline: None
) -> None:
    from huggingface_hub import constants

    hub.add_commit("org/off", ckpts["tiny-sharded"])
    with pytest.raises(OfflineNotCachedError) as e:
        open_source("org/off")  # nothing cached yet
    assert e.value.repo_id == "org/off" and not hub.log
    assert "hf download org/off --include" in e.value.hint
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
    monkeypatch.delenv("HF_HUB_OFFLINE")
    online = open_source("org/off")
    expected = verify(online)  # headers by Range: nothing cached
    assert isinstance(online, HubSource)
    online.download("config.json")
    online.download("model.safetensors.index.json")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(OfflineNotCachedError) as e:
        open_source("org/off")
    assert e.value.missing and all(m.endswith(".safetensors") for m in e.value.missing)
    for name in online.list_files():
        if name.endswith(".safetensors"):
            online.download(name)  # e.g. smoke fetched the weights
    before = len(hub.log)
    report = verify(open_source("org/off"))
    assert hub.log[before:] == []  # not one request
    same_report(report, expected)
    assert report.extra["offline"] and report.extra["commit_sha"] == expected.extra["commit_sha"]


def test_online_reads_what_is_cached_from_disk(hub: FakeHub, ckpts: dict[str, Path]) -> None:
    hub.add_commit("org/warm", ckpts["tiny"])
    first = open_source("org/warm")
    assert isinstance(first, HubSource)
    for name in first.list_files():
        first.download(name)
    before = len(hub.log)
    report = verify(open_source("org/warm"))
    assert [e.path for e in hub.log[before:]] == ["/api/models/org/warm/revision/main"]  # the listing only
    same_report(report, verify(ckpts["tiny"]))


def test_download_returns_the_file(hub: FakeHub, ckpts: dict[str, Path]) -> None:
    hub.add_commit("org/dl", ckpts["tiny"])
    src = open_source("org/dl")
    assert isinstance(src, HubSource)
    p = src.download("model.safetensors")
    assert p.read_bytes() == (ckpts["tiny"] / "model.safetensors").read_bytes()
    assert src.local_path("model.safetensors") == p
    assert (
        src.read_range("model.safetensors", 8, 4) == (ckpts["tiny"] / "model.safetensors").read_bytes()[8:12]
    )


def test_private_repo_with_token(
    hub: FakeHub, ckpts: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    hub.add_commit("org/private", ckpts["tiny"], private=True, granted={"hf_granted"})
    with pytest.raises(RepositoryNotFoundError) as e:
        open_source("org/private")
    assert e.value.repo_id == "org/private" and e.value.revision == "main"
    assert not verify(open_source("org/private", token="hf_granted")).failed()
    monkeypatch.setenv("HF_TOKEN", "hf_granted")  # the usual environment variable
    assert not verify(open_source("org/private")).failed()


def test_local_path_wins_and_disambiguation(
    tmp_path: Path, ckpts: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    shutil.copytree(ckpts["tiny"], tmp_path / "org" / "name")
    assert isinstance(open_source("org/name"), LocalSource)  # exists locally: never the Hub
    for bad in ("./org/missing", "/nonexistent/dir", "justaname", "~/nope-dflash2", "a/b/../c"):
        with pytest.raises(SourceError, match="no such file"):
            open_source(bad)
    with pytest.raises(SourceError, match="--revision applies to Hub repos"):
        open_source("org/name", revision="main")
    with pytest.raises(SourceError, match="two revisions"):
        open_source("org/other@v1", revision="v2")


@pytest.mark.parametrize(
    "text, ref",
    [
        ("org/name", RepoRef("org/name")),
        ("hf://org/name", RepoRef("org/name")),
        ("org/name@v1.2", RepoRef("org/name", "v1.2")),
        ("org/name@refs/pr/3", RepoRef("org/name", "refs/pr/3")),
        ("org/name@refs/pr/3/dflash", RepoRef("org/name", "refs/pr/3", "dflash")),
        ("org/name/dflash", RepoRef("org/name", None, "dflash")),
        ("org/name@main/a/b", RepoRef("org/name", "main", "a/b")),
        ("z-lab/Qwen3.8-27B-DFlash2", RepoRef("z-lab/Qwen3.8-27B-DFlash2")),
        ("name", None),
        ("org/", None),
        ("org/name@", None),
        ("org/na me", None),
        ("org/../x", None),
        ("org//x", None),
        ("-org/x", None),
        ("org/name/../x", None),
        ("org--a/x", None),
    ],
)
def test_parse_repo_ref(text: str, ref: RepoRef | None) -> None:
    assert parse_repo_ref(text) == ref


def test_listing_matches_a_local_directory(hub: FakeHub, ckpts: dict[str, Path]) -> None:
    files = {
        ".gitattributes": b"*.safetensors filter=lfs\n",
        "sub/x.json": b"{}",
        **{p.name: p for p in ckpts["tiny"].iterdir()},
    }
    hub.add_commit("org/list", files)
    src = open_source("org/list")
    assert src.list_files() == LocalSource(ckpts["tiny"]).list_files()
    assert open_checkpoint(src).tensors.keys() == open_checkpoint(ckpts["tiny"]).tensors.keys()
