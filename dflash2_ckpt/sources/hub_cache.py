"""The local Hub cache, through huggingface_hub's own cache API (never its directory layout by hand).

Lookups: `scan_cache_dir` for a whole snapshot (offline: which commit a branch points at and which
files are there), `try_to_load_from_cache` for one file at a commit (online: a file already cached is
read from disk, not fetched). Writes: `hf_hub_download`, which records branch -> commit itself.
"""
from __future__ import annotations

import sys
from pathlib import Path
from typing import Any


def cached_snapshot(repo_id: str, revision: str, cache_dir: str) -> tuple[str, dict[str, Path]] | None:
    """(commit sha, {path in repo: file}) of the cached snapshot `revision` (branch, tag or sha) names."""
    from huggingface_hub import scan_cache_dir
    from huggingface_hub.errors import CacheNotFound
    try:
        info = scan_cache_dir(cache_dir)
    except (CacheNotFound, OSError):
        return None
    for repo in info.repos:
        if repo.repo_id != repo_id or repo.repo_type != "model":
            continue
        for rev in repo.revisions:
            if rev.commit_hash == revision or revision in rev.refs:
                return rev.commit_hash, {f.file_path.relative_to(rev.snapshot_path).as_posix(): f.file_path
                                         for f in rev.files}
    return None


def cached_file(repo_id: str, filename: str, cache_dir: str, sha: str) -> Path | None:
    """The cached copy of `filename` at commit `sha`, or None."""
    from huggingface_hub import try_to_load_from_cache
    try:
        hit = try_to_load_from_cache(repo_id, filename, cache_dir=cache_dir, revision=sha)
    except ValueError:              # a file name the cache cannot hold
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


def download(repo_id: str, filename: str, *, revision: str, sha: str, cache_dir: str, token: str | None,
             endpoint: str, offline: bool) -> Path:
    """Fetch one whole file into the cache and return the copy at commit `sha`.

    Asked for by branch, so that huggingface_hub records branch -> commit for a later offline run;
    if the branch moved since `sha` was resolved, the file is fetched again at `sha` itself.
    """
    from huggingface_hub import hf_hub_download
    from .hub_transport import quiet_hub_logs
    bars = None if sys.stderr.isatty() else _quiet_tqdm()
    with quiet_hub_logs():
        path = hf_hub_download(repo_id, filename, revision=revision, cache_dir=cache_dir, token=token,
                               endpoint=endpoint, local_files_only=offline, tqdm_class=bars)
        pinned = cached_file(repo_id, filename, cache_dir, sha) if sha else Path(path)
        if pinned is None:
            pinned = Path(hf_hub_download(repo_id, filename, revision=sha, cache_dir=cache_dir, token=token,
                                          endpoint=endpoint, local_files_only=offline, tqdm_class=bars))
    return pinned
