"""The audit cache: one JSON row per (repo, resolved commit sha, subfolder, engines, toolkit version).

A commit sha names immutable content, so a row keyed by it never goes stale for the same toolkit and
engine profiles; a re-run then costs the one metadata request that resolves the sha. Rows are written
atomically (temporary file + os.replace), so concurrent workers and an interrupted run never leave a
half-written entry behind.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ..errors import UnsafeOutputError


def cache_key(repo_id: str, sha: str, subfolder: str | None, engines: Iterable[str], fingerprint: str) -> str:
    doc = {
        "repo": repo_id,
        "sha": sha,
        "subfolder": subfolder or "",
        "engines": sorted(engines),
        "fingerprint": fingerprint,
    }
    return hashlib.sha256(json.dumps(doc, sort_keys=True).encode()).hexdigest()


class AuditCache:
    def __init__(self, directory: str | os.PathLike[str] | None) -> None:
        self.dir = Path(directory) if directory is not None else None
        self.hits = 0

    def _path(self, key: str) -> Path | None:
        return self.dir / key[:2] / f"{key}.json" if self.dir is not None else None

    def get(self, key: str) -> dict[str, Any] | None:
        path = self._path(key)
        if path is None or not path.is_file():
            return None
        try:
            row = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None  # a damaged entry is a miss, and the next put replaces it
        if not isinstance(row, dict):
            return None
        self.hits += 1
        return row

    def put(self, key: str, row: dict[str, Any]) -> None:
        path = self._path(key)
        if path is None:
            return
        path.parent.mkdir(parents=True, exist_ok=True)
        from ..sources.safe_write import write_text  # lazy: sources.safe_write loads only on this path

        try:  # the write guard: a planted link or hard link in the cache is never written through
            write_text(path, json.dumps(row, sort_keys=True), durable=False)
        except UnsafeOutputError:
            return  # not cached: the next run computes the row again
