"""The local Hub cache, through huggingface_hub's own cache API (never its directory layout by hand).

Lookups: `snapshot_download(local_files_only=True)` for one repo's snapshot (offline: which commit a
branch points at and which files are there; huggingface_hub resolves the ref itself, and only this
repo is looked at: scanning the whole cache cost 0.77 s on a cache of 300 repos), `try_to_load_from_cache` for one file at a commit (online: a file already cached is
read from disk, not fetched). Writes: `hf_hub_download`, which records branch -> commit itself.

huggingface_hub finds a commit only by its full 40-hex name; a shorter hex revision (`org/name@abc1234`, as
git and the Hub's web pages abbreviate it) that names no branch or tag is matched against the cached commits
(`scan_cache_dir`, so the whole-cache scan is paid only then): one match is that commit, several are refused.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

# an abbreviated commit: git's shortest default abbreviation is 4 hex digits; 40 is a full name
_SHORT_SHA = re.compile(r"[0-9a-f]{4,39}")


class AmbiguousCommit(Exception):
    """A short hex revision that several cached commits start with."""

    def __init__(self, candidates: list[str]) -> None:
        super().__init__(", ".join(candidates))
        self.candidates = candidates


def cached_commits(repo_id: str, cache_dir: str) -> list[str]:
    """Every commit of the repo the cache holds a snapshot of (whichever refs point at it)."""
    from huggingface_hub import scan_cache_dir  # heavy: huggingface_hub loads only when this runs
    from huggingface_hub.errors import CacheNotFound  # heavy: huggingface_hub loads only when this runs

    try:
        info = scan_cache_dir(cache_dir)
    except (CacheNotFound, OSError, ValueError):
        return []
    return sorted(
        rev.commit_hash
        for repo in info.repos
        if repo.repo_id == repo_id and repo.repo_type == "model"
        for rev in repo.revisions
    )


def expand_commit(repo_id: str, revision: str, cache_dir: str) -> str | None:
    """The one cached commit an abbreviated hex revision names; None when none does; AmbiguousCommit."""
    if not _SHORT_SHA.fullmatch(revision):
        return None
    hits = [c for c in cached_commits(repo_id, cache_dir) if c.startswith(revision)]
    if len(hits) > 1:
        raise AmbiguousCommit(hits)
    return hits[0] if hits else None


def cached_snapshot(repo_id: str, revision: str, cache_dir: str) -> tuple[str, dict[str, Path]] | None:
    """(commit sha, {path in repo: file}) of the cached snapshot `revision` (branch, tag, sha or a unique
    prefix of a cached sha) names. Raises AmbiguousCommit for a prefix several cached commits share."""
    from huggingface_hub import snapshot_download  # heavy: huggingface_hub loads only when this runs

    # heavy: huggingface_hub loads only when this runs
    from huggingface_hub.errors import LocalEntryNotFoundError

    from .hub_transport import quiet_hub_logs  # lazy: sources.hub_transport loads only on this path

    try:
        with quiet_hub_logs():
            folder = Path(
                snapshot_download(repo_id, revision=revision, cache_dir=cache_dir, local_files_only=True)
            )
    except (LocalEntryNotFoundError, OSError, ValueError):
        full = expand_commit(repo_id, revision, cache_dir)  # a branch or tag of that name came first
        return None if full is None else cached_snapshot(repo_id, full, cache_dir)
    # the snapshot folder is named by the commit it holds (huggingface_hub's documented return value)
    files = {p.relative_to(folder).as_posix(): p for p in sorted(folder.rglob("*")) if p.is_file()}
    return folder.name, files


def cached_file(repo_id: str, filename: str, cache_dir: str, sha: str) -> Path | None:
    """The cached copy of `filename` at commit `sha`, or None."""
    from huggingface_hub import try_to_load_from_cache  # heavy: huggingface_hub loads only when this runs

    try:
        hit = try_to_load_from_cache(repo_id, filename, cache_dir=cache_dir, revision=sha)
    except ValueError:  # a file name the cache cannot hold
        return None
    return Path(hit) if isinstance(hit, str) else None


def _quiet_tqdm() -> Any:
    """Progress bars only on a terminal: a bar class that never draws, for pipes, CI and hooks."""
    from tqdm.auto import tqdm  # type: ignore[import-untyped]

    class _Silent(tqdm):  # type: ignore[misc]
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            kwargs.pop("name", None)
            kwargs["disable"] = True
            super().__init__(*args, **kwargs)

    return _Silent


def download(
    repo_id: str,
    filename: str,
    *,
    revision: str,
    sha: str,
    cache_dir: str,
    token: str | None,
    endpoint: str,
    offline: bool,
) -> Path:
    """Fetch one whole file into the cache and return the copy at commit `sha`.

    Asked for by branch, so that huggingface_hub records branch -> commit for a later offline run;
    if the branch moved since `sha` was resolved, the file is fetched again at `sha` itself.
    """
    from huggingface_hub import hf_hub_download  # heavy: huggingface_hub loads only when this runs

    from .hub_transport import quiet_hub_logs  # lazy: sources.hub_transport loads only on this path

    bars = None if sys.stderr.isatty() else _quiet_tqdm()
    with quiet_hub_logs():
        path = hf_hub_download(
            repo_id,
            filename,
            revision=revision,
            cache_dir=cache_dir,
            token=token,
            endpoint=endpoint,
            local_files_only=offline,
            tqdm_class=bars,
        )
        pinned = cached_file(repo_id, filename, cache_dir, sha) if sha else Path(path)
        if pinned is None:
            pinned = Path(
                hf_hub_download(
                    repo_id,
                    filename,
                    revision=sha,
                    cache_dir=cache_dir,
                    token=token,
                    endpoint=endpoint,
                    local_files_only=offline,
                    tqdm_class=bars,
                )
            )
    return pinned
