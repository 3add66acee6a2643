"""Offline, `org/name@abc1234` (an abbreviated commit, as git and the Hub's pages show it) is found in a
Hugging Face cache directory that holds that snapshot; a prefix several cached commits share is refused
with the candidates. The cache is laid out by hand (HF_HUB_CACHE) as huggingface_hub writes it: no Hub."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from _kit.cli import invoke
from conftest import FIXTURES

GOOD = FIXTURES / "good" / "nested-v2"
SHA_A = "abc123" + "0" * 34
SHA_B = "abc124" + "1" * 34
SHA_C = "abd999" + "2" * 34


def _cache(root: Path, *commits: str, refs: dict[str, str] | None = None) -> Path:
    repo = root / "models--org--drafter"
    for sha in commits:
        shutil.copytree(GOOD, repo / "snapshots" / sha)
    (repo / "refs").mkdir(parents=True)
    (repo / "blobs").mkdir()
    for name, sha in (refs or {}).items():
        (repo / "refs" / name).write_text(sha)
    return root


@pytest.fixture
def cache_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, offline: None) -> Path:
    for var in ("HF_HOME", "HUGGINGFACE_HUB_CACHE"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    return tmp_path / "hub"


def _verify(ref: str) -> tuple[int, dict]:
    r = invoke("verify", ref, "--format", "json")
    return r.exit_code, (json.loads(r.stdout) if r.exit_code in (0, 1) else {"stderr": r.stderr})


@pytest.mark.parametrize("rev", ["abc123", "abc1230", "abc1", SHA_A])
def test_a_unique_prefix_of_a_cached_commit_is_that_commit(cache_env: Path, rev: str) -> None:
    _cache(cache_env, SHA_A, SHA_C, refs={"main": SHA_C})
    rc, doc = _verify(f"org/drafter@{rev}")
    assert rc == 0, doc  # before: "is not in the local cache (nothing cached)" for any short hash
    assert doc["commit_sha"] == SHA_A and doc["offline"] is True


def test_branches_still_resolve_through_refs(cache_env: Path) -> None:
    _cache(cache_env, SHA_A, SHA_C, refs={"main": SHA_C, "abc1": SHA_C})
    assert _verify("org/drafter")[1]["commit_sha"] == SHA_C
    # a branch named like a hex prefix is that branch, as on the Hub, not a commit it abbreviates
    assert _verify("org/drafter@abc1")[1]["commit_sha"] == SHA_C


def test_an_ambiguous_prefix_lists_the_candidates(cache_env: Path) -> None:
    _cache(cache_env, SHA_A, SHA_B, SHA_C)
    r = invoke("verify", "org/drafter@abc12")
    assert r.exit_code == 3
    assert "ambiguous" in r.stderr and SHA_A in r.stderr and SHA_B in r.stderr and SHA_C not in r.stderr
    assert "Traceback" not in r.output


@pytest.mark.parametrize("rev", ["abc", "abe", "zzzz1234"])
def test_no_match_still_says_not_cached(cache_env: Path, rev: str) -> None:
    _cache(cache_env, SHA_A)
    r = invoke("verify", f"org/drafter@{rev}")
    assert r.exit_code == 3 and "not in the local cache" in r.stderr


def test_the_library_error_carries_the_candidates(cache_env: Path) -> None:
    from dflash2_ckpt.errors import AmbiguousRevisionError, RevisionNotFoundError
    from dflash2_ckpt.sources.hub import HubSource

    _cache(cache_env, SHA_A, SHA_B)
    with pytest.raises(AmbiguousRevisionError) as e:
        HubSource("org/drafter", revision="abc12")
    assert isinstance(e.value, RevisionNotFoundError) and e.value.candidates == [SHA_A, SHA_B]
