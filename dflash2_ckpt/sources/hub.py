"""A Hugging Face Hub repo folder as a Source: `org/name[@revision][/subfolder]` or a Hub URL.

Header-level work never downloads weights: the revision is resolved once to a commit (so every read
sees the same snapshot, even if the branch moves), config.json and the index are read whole and each
safetensors header by HTTP Range, all through hub_transport (huggingface_hub's retrying helpers,
bounded). A file already in the local Hub cache is read from disk; offline, the snapshot comes from
the cache alone (hub_cache). All the checks then run unchanged, exactly as on a local directory.
"""

from __future__ import annotations

import copy
import json
import os
from pathlib import Path
from typing import Any
from urllib.parse import quote

from ..errors import SourceError
from .hub_cache import AmbiguousCommit, cached_file, cached_snapshot, download
from .hub_errors import Where, ambiguous_commit, bad_answer, from_exception, offline_not_cached
from .hub_ref import RepoRef, parse_repo_ref
from .hub_transport import HubTransport, RetryPolicy, quiet_hub_logs
from .local import MAX_JSON_BYTES, SourceBase
from .names import INDEX

__all__ = ["HubSource", "RepoRef", "RetryPolicy", "hub_settings", "parse_repo_ref"]

# first ranged read of a file: enough for a typical drafter header (the 27B one is 8.9 KiB)
_READAHEAD = 16 * 1024


def _size(src: HubSource, name: str, size: Any) -> int | None:
    """A listed file size: a non-negative int, or None (asked for with HEAD). Anything else is the
    Hub's answer at fault, not the checkpoint."""
    if size is None or (isinstance(size, int) and not isinstance(size, bool) and 0 <= size < 1 << 53):
        return size
    raise bad_answer(src.where, f"model info lists {name} with size {str(size)[:40]!r}, which is not a size")


def _is_true(value: str | None) -> bool:
    return (value or "").strip().upper() in {"1", "ON", "YES", "TRUE"}


def hub_settings() -> dict[str, Any]:
    """Endpoint, cache and offline flag, read at call time.

    huggingface_hub reads its environment once, at import; reading it again here means a variable
    set later in the process (a test, a notebook) is honoured the same way as one set before.
    """
    from huggingface_hub import constants  # heavy: huggingface_hub loads only when this runs

    home = os.environ.get("HF_HOME")
    cache = os.environ.get("HF_HUB_CACHE") or (os.path.join(home, "hub") if home else constants.HF_HUB_CACHE)
    return {
        "endpoint": (os.environ.get("HF_ENDPOINT") or constants.ENDPOINT).rstrip("/"),
        "cache_dir": os.path.expanduser(cache),
        "offline": constants.HF_HUB_OFFLINE or _is_true(os.environ.get("HF_HUB_OFFLINE")),
    }


class HubSource(SourceBase):
    """One folder of one Hub model repo at one commit. Implements the Source protocol."""

    def __init__(
        self,
        repo_id: str,
        *,
        revision: str | None = None,
        subfolder: str | None = None,
        token: str | None = None,
        endpoint: str | None = None,
        cache_dir: str | None = None,
        offline: bool | None = None,
        policy: RetryPolicy | None = None,
        config_only: bool = False,
    ) -> None:
        s = hub_settings()
        self.repo_id: str = repo_id
        self.revision = revision or "main"
        self.token = token or None  # None: huggingface_hub finds HF_TOKEN or the stored login
        self.endpoint = (endpoint or s["endpoint"]).rstrip("/")
        self.cache_dir = cache_dir or s["cache_dir"]
        self.offline = s["offline"] if offline is None else offline
        self._typed_revision = revision
        self.sha: str = ""
        self.bytes_fetched = 0  # file bytes received over HTTP by this source
        self.repo_files: list[str] = []  # every file of the repo at sha (for hints and subfolder search)
        self._repo_sizes: dict[str, int | None] = {}
        self._snapshot: dict[str, Path] = {}  # offline: every cached file of the snapshot
        self.file: str | None = None  # one file of the folder to check (org/name/drafter.gguf)
        if subfolder and subfolder.strip("/").endswith(".gguf"):
            folder, _, self.file = subfolder.strip("/").rpartition("/")
            subfolder = folder or None
        self._set_folder(subfolder)
        self.transport = HubTransport(self.where, self.token, policy)
        if self.offline:
            self._resolve_offline(config_only)
        else:
            self._resolve_online()
        self._set_folder(subfolder)

    # -- resolution ---------------------------------------------------------------------------------
    def _set_folder(self, subfolder: str | None) -> None:
        """Point this source at one folder of the resolved repo (the listing is kept, nothing is fetched)."""
        self.subfolder = (subfolder or "").strip("/") or None
        rev = f"@{self._typed_revision}" if self._typed_revision else ""
        self.label = self.repo_id + rev + (f"/{self.subfolder}" if self.subfolder else "")
        self.where = Where(self.repo_id, self.revision, self.endpoint, self.label)
        if hasattr(self, "transport"):
            self.transport.where = self.where
        self._sizes: dict[str, int | None] = {}
        self._cached: dict[str, Path] = {}
        self._misses: set[str] = set()
        self._heads: dict[str, bytes] = {}  # the first bytes of each file read by Range
        self._whole: dict[str, bytes] = {}  # small JSON files read whole
        prefix = f"{self.subfolder}/" if self.subfolder else ""
        for path, size in self._repo_sizes.items():
            rel = path[len(prefix) :]
            if path.startswith(prefix) and rel and "/" not in rel and not rel.startswith("."):
                self._sizes[rel] = size
                if path in self._snapshot:
                    self._cached[rel] = self._snapshot[path]

    def sub(self, subfolder: str) -> HubSource:
        """The same repo at the same commit, another folder (no request)."""
        other = copy.copy(self)
        other.transport = copy.copy(self.transport)
        other._set_folder(subfolder)
        return other

    def _path(self, name: str) -> str:
        return f"{self.subfolder}/{name}" if self.subfolder else name

    def _resolve_online(self) -> None:
        url = f"{self.endpoint}/api/models/{self.repo_id}/revision/{quote(self.revision, safe='')}"
        info = self.transport.get_json(url, params={"blobs": True})
        sha = info.get("sha") if isinstance(info, dict) else None
        if not isinstance(sha, str) or not sha:
            raise SourceError("the Hub did not say which commit the revision resolves to", path=self.label)
        self.sha = sha
        siblings = info.get("siblings") or []
        if not isinstance(siblings, list):
            raise bad_answer(self.where, "model info lists its files as something other than a list")
        self._repo_sizes = {
            s["rfilename"]: _size(self, s["rfilename"], s.get("size"))
            for s in siblings
            if isinstance(s, dict) and isinstance(s.get("rfilename"), str)
        }
        self.repo_files = sorted(self._repo_sizes)

    def _resolve_offline(self, config_only: bool) -> None:
        try:
            snap = cached_snapshot(self.repo_id, self.revision, self.cache_dir)
        except AmbiguousCommit as e:
            raise ambiguous_commit(self.where, e.candidates) from None
        if snap is None:
            need = [self._path("config.json")] if config_only else []
            raise offline_not_cached(self.where, need)
        self.sha, self._snapshot = snap
        self._repo_sizes = {p: f.stat().st_size for p, f in self._snapshot.items()}
        self.repo_files = sorted(self._repo_sizes)

    def require_checkpoint(self) -> None:
        """Refuse, with the next step, a folder that holds no safetensors checkpoint to check."""
        names = list(self._sizes)
        gguf = self.file is not None or any(
            n.endswith(".gguf") for n in names
        )  # a GGUF drafter needs no config
        if self.offline and "config.json" not in names and not gguf:
            raise offline_not_cached(self.where, [self._path("config.json")])
        if not gguf and not any(n.endswith(".safetensors") for n in names) and INDEX not in names:
            if self.offline:
                raise offline_not_cached(self.where, [self._path("*.safetensors")])
            where = f"{self.repo_id}/{self.subfolder}" if self.subfolder else self.repo_id
            folders = sorted(
                {
                    f.rsplit("/", 1)[0]
                    for f in self.repo_files
                    if "/" in f and f.endswith(("config.json", ".safetensors"))
                }
            )
            other = [n for n in names if n.endswith((".bin", ".pt", ".pth", ".gguf", ".ckpt"))]
            hint = (
                f"the drafter may be in a subfolder: --subfolder {folders[0]}"
                if folders
                else f"found {', '.join(other[:3])}; publish safetensors"
                if other
                else "is this the right repo? A drafter repo holds config.json and model*.safetensors"
            )
            raise SourceError(
                f"not a safetensors checkpoint: no .safetensors files in {where} at {self.sha[:12]}",
                path=self.label,
                hint=hint,
            )
        if self.offline and INDEX in self._cached:
            try:
                shards = set(json.loads(self._cached[INDEX].read_bytes()).get("weight_map", {}).values())
            except (OSError, ValueError, AttributeError):
                shards = set()
            missing = sorted(s for s in shards if isinstance(s, str) and s not in self._cached)
            if missing:
                raise offline_not_cached(self.where, [self._path(m) for m in missing])

    # -- the Source protocol --------------------------------------------------------------------------
    def list_files(self) -> list[str]:
        return sorted(self._sizes)

    def file_size(self, name: str) -> int:
        if name not in self._sizes:
            raise SourceError(f"{name} is not in {self.label} at commit {self.sha[:12]}", path=self.label)
        size = self._sizes[name]
        if size is None:  # the listing had no sizes: ask for this file's metadata
            size = self._head(name)
            self._sizes[name] = size
        return size

    def read_range(self, name: str, start: int, length: int) -> bytes:
        size = self.file_size(name)
        length = max(0, min(length, size - start))
        local = self.local_path(name)
        if local is not None:
            with open(local, "rb") as f:
                f.seek(start)
                return f.read(length)
        if self.offline:
            raise offline_not_cached(self.where, [self._path(name)])
        if name.endswith(".json") and size <= MAX_JSON_BYTES:
            if name not in self._whole:  # config and index: whole, once
                self._whole[name] = self._get(name, 0, size)
            return self._whole[name][start : start + length]
        if not length:
            return b""
        head = self._heads.get(name, b"")
        if start + length <= len(head):
            return head[start : start + length]
        if start == 0:
            # the header reader asks for 8 bytes, then the header: one request for both saves a round
            # trip (two, with the CDN redirect) at the cost of a few KiB
            head = self._get(name, 0, min(size, max(length, _READAHEAD)))
            self._heads[name] = head
            return head[:length]
        if head and start <= len(head):  # a header longer than the readahead: fetch the rest
            head += self._get(name, len(head), start + length - len(head))
            self._heads[name] = head
            return head[start : start + length]
        return self._get(name, start, length)

    def local_path(self, name: str) -> Path | None:
        """A copy on disk: the offline snapshot, a download, or a file already in the Hub cache at this commit."""
        if name in self._cached:
            return self._cached[name]
        if self.offline or not self.sha or name in self._misses or name not in self._sizes:
            return None
        hit = cached_file(self.repo_id, self._path(name), self.cache_dir, self.sha)
        if hit is None:
            self._misses.add(name)
            return None
        self._cached[name] = hit
        return hit

    def report_extra(self) -> dict[str, Any]:
        return {
            "source": "hub",
            "repo_id": self.repo_id,
            "revision": self.revision,
            "commit_sha": self.sha,
            "subfolder": self.subfolder,
            "offline": self.offline,
            "bytes_fetched": self.bytes_fetched,
        }

    # -- transfers ----------------------------------------------------------------------------------------
    def _url(self, name: str) -> str:
        from huggingface_hub import hf_hub_url  # heavy: huggingface_hub loads only when this runs

        return hf_hub_url(self.repo_id, self._path(name), revision=self.sha, endpoint=self.endpoint)

    def _get(self, name: str, start: int, length: int) -> bytes:
        counter = [0]
        try:
            return self.transport.get_range(self._url(name), start, length, counter)
        finally:
            self.bytes_fetched += counter[0]

    def _head(self, name: str) -> int:
        from huggingface_hub import get_hf_file_metadata  # heavy: huggingface_hub loads only when this runs

        try:
            with quiet_hub_logs():
                meta = get_hf_file_metadata(
                    self._url(name),
                    token=self.token,
                    endpoint=self.endpoint,
                    timeout=self.transport.policy.timeout,
                    retry_on_errors=True,
                )
        except Exception as e:  # noqa: BLE001 - every failure becomes one typed error with a hint
            raise from_exception(e, self.where) from None
        if meta.size is None:
            raise SourceError(f"the Hub did not say how large {name} is", path=self.label)
        return meta.size

    def download(self, name: str) -> Path:
        """The whole file, through huggingface_hub's cache (smoke needs the weights); returns its path."""
        local = self.local_path(name)
        if local is not None:
            return local
        from .hub_client import bounded_hub_calls  # lazy: sources.hub_client loads only on this path

        try:
            with bounded_hub_calls(self.where, self.transport.policy):  # the library's download too
                path = download(
                    self.repo_id,
                    self._path(name),
                    revision=self.revision,
                    sha=self.sha,
                    cache_dir=self.cache_dir,
                    token=self.token,
                    endpoint=self.endpoint,
                    offline=self.offline,
                )
        except Exception as e:  # noqa: BLE001
            raise from_exception(e, self.where) from None
        size = self._sizes.get(name)
        self.bytes_fetched += size if size is not None else path.stat().st_size
        self._cached[name] = path
        return path
