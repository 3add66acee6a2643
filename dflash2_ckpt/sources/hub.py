"""Hugging Face Hub repos as a Source: `org/name[@revision][/subfolder]`.

Header-level work never downloads weights: config.json and the index go through huggingface_hub's
cache (so a later offline run finds them), safetensors headers are read with HTTP Range requests at
the commit the revision resolved to (so every read sees the same snapshot, even if the branch moves).
All the checks then run unchanged on this Source, exactly as on a local directory.
"""
from __future__ import annotations

import json
import os
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import SourceError
from .local import LocalSource, Source

INDEX = "model.safetensors.index.json"
# a single JSON file larger than this is read by Range like any other file instead of being cached
_CACHE_JSON_MAX = 16 * 1024 * 1024
# first ranged read of a file: enough for a typical drafter header (the 27B one is 8.9 KiB)
_READAHEAD = 16 * 1024
_COMMIT_RE = re.compile(r"^[0-9a-f]{40}$")
_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")


@dataclass(frozen=True)
class RepoRef:
    repo_id: str
    revision: str | None = None
    subfolder: str | None = None


def parse_repo_ref(text: str) -> RepoRef | None:
    """`[hf://]org/name[@revision][/sub/folder]`, or None when `text` is not shaped like a repo id.

    A revision `refs/pr/N` or `refs/convert/X` keeps its slashes; anything else after the name is a
    subfolder. Single names ("gpt2") are not accepted: too easy to confuse with a mistyped path.
    """
    s = text[len("hf://"):] if text.startswith("hf://") else text
    parts = s.split("/")
    if len(parts) < 2:
        return None
    org, name, rest = parts[0], parts[1], parts[2:]
    revision = None
    if "@" in name:
        name, revision = name.split("@", 1)
        if revision == "refs" and len(rest) >= 2:
            revision, rest = "/".join(["refs", *rest[:2]]), rest[2:]
        if not revision:
            return None
    if not (_NAME_RE.match(org) and _NAME_RE.match(name)) or ".." in org + name or "--" in org + name:
        return None
    if any(p in ("", ".", "..") for p in rest):
        return None
    return RepoRef(f"{org}/{name}", revision, "/".join(rest) or None)


def _is_true(value: str | None) -> bool:
    return (value or "").strip().upper() in {"1", "ON", "YES", "TRUE"}


def hub_settings() -> dict[str, Any]:
    """Endpoint, cache and offline flag, read at call time.

    huggingface_hub reads its environment once, at import; reading it again here means a variable
    set later in the process (a test, a notebook) is honoured the same way as one set before.
    """
    from huggingface_hub import constants
    home = os.environ.get("HF_HOME")
    cache = os.environ.get("HF_HUB_CACHE") or (os.path.join(home, "hub") if home else constants.HF_HUB_CACHE)
    return {
        "endpoint": (os.environ.get("HF_ENDPOINT") or constants.ENDPOINT).rstrip("/"),
        "cache_dir": os.path.expanduser(cache),
        "offline": constants.HF_HUB_OFFLINE or _is_true(os.environ.get("HF_HUB_OFFLINE")),
    }


def _transport_errors() -> tuple[type[BaseException], ...]:
    """The HTTP client's connection errors (httpx2 / httpx, whichever huggingface_hub brought)."""
    out: list[type[BaseException]] = [ConnectionError, TimeoutError]
    for mod in ("httpx2", "httpx"):
        try:
            out.append(__import__(mod).TransportError)
        except (ImportError, AttributeError):
            pass
    return tuple(out)


def hub_error(e: BaseException, label: str, *, endpoint: str = "", revision: str | None = None) -> SourceError:
    """One SourceError that says what happened and what to do next, for any huggingface_hub failure."""
    from huggingface_hub import errors as he
    repo = label.split("@")[0].split("/", 2)
    repo_id = "/".join(repo[:2])
    if isinstance(e, SourceError):
        return e
    if isinstance(e, he.GatedRepoError):
        return SourceError("the repo is gated and this token has not been granted access", path=label,
                           hint=f"accept the conditions at {endpoint}/{repo_id}, then pass --token or set HF_TOKEN")
    if isinstance(e, he.RevisionNotFoundError):
        return SourceError(f"revision {revision or 'main'!r} not found in {repo_id}", path=label,
                           hint="give an existing branch, tag or commit sha with --revision (or @rev)")
    if isinstance(e, he.RepositoryNotFoundError):
        return SourceError(f"repo {repo_id} not found (or private, and this token cannot see it)", path=label,
                           hint="check the spelling; for a private repo pass --token or set HF_TOKEN")
    if isinstance(e, (he.RemoteEntryNotFoundError, he.EntryNotFoundError)):
        return SourceError(f"file not found in the repo: {e}".splitlines()[0], path=label)
    if isinstance(e, he.OfflineModeIsEnabled):
        return SourceError("offline mode (HF_HUB_OFFLINE) is on and the files are not in the local cache",
                           path=label, hint="unset HF_HUB_OFFLINE, or download the repo first")
    if isinstance(e, he.HfHubHTTPError):
        status = e.response.status_code if getattr(e, "response", None) is not None else None
        if status == 401:
            return SourceError("unauthorised: the Hub rejected the token", path=label,
                               hint="check --token / HF_TOKEN (a fine-grained token needs read access to this repo)")
        if status == 403:
            return SourceError("forbidden: this token may not read the repo", path=label,
                               hint="use a token with read access to the repo")
        return SourceError(f"the Hub answered HTTP {status}: {str(e).strip().splitlines()[0]}", path=label,
                           hint="retry later; if it persists, check https://status.huggingface.co")
    if isinstance(e, he.LocalEntryNotFoundError):
        return SourceError(f"cannot reach {endpoint or 'the Hub'} and the files are not in the local cache",
                           path=label, hint="check your connection or proxy (HF_ENDPOINT), or run online once")
    if isinstance(e, _transport_errors()):
        return SourceError(f"cannot reach {endpoint or 'the Hub'}: {type(e).__name__}: {e}".rstrip(": "), path=label,
                           hint="check your connection or proxy; with the files cached, set HF_HUB_OFFLINE=1")
    if isinstance(e, ValueError):
        return SourceError(f"invalid Hub request: {e}", path=label)
    return SourceError(f"Hub access failed: {type(e).__name__}: {e}", path=label)


def _quiet_tqdm() -> Any:
    """Progress bars only on a terminal: a bar class that never draws, for pipes, CI and hooks."""
    from tqdm.auto import tqdm

    class _Silent(tqdm):  # type: ignore[misc,valid-type]
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            kwargs.pop("name", None)
            kwargs["disable"] = True
            super().__init__(*args, **kwargs)
    return _Silent


class HubSource:
    """One folder of one Hub model repo at one commit. Implements the Source protocol."""

    def __init__(self, repo_id: str, *, revision: str | None = None, subfolder: str | None = None,
                 token: str | None = None, endpoint: str | None = None, cache_dir: str | None = None,
                 offline: bool | None = None) -> None:
        s = hub_settings()
        self.repo_id = repo_id
        self.revision = revision or "main"
        self.subfolder = (subfolder or "").strip("/") or None
        self.token = token or None          # None: huggingface_hub finds HF_TOKEN or the stored login
        self.endpoint = (endpoint or s["endpoint"]).rstrip("/")
        self.cache_dir = cache_dir or s["cache_dir"]
        self.offline = s["offline"] if offline is None else offline
        self.label = repo_id + (f"@{revision}" if revision else "") + (f"/{self.subfolder}" if self.subfolder else "")
        self.bytes_fetched = 0              # file bytes received over HTTP by this source
        self.file: str | None = None        # one file of the folder to check (org/name/drafter.gguf)
        if self.subfolder and self.subfolder.endswith(".gguf"):
            folder, _, self.file = self.subfolder.rpartition("/")
            self.subfolder = folder or None
        self.sha = ""
        self.repo_files: list[str] = []     # every file of the repo at sha (for hints)
        self._sizes: dict[str, int | None] = {}
        self._cached: dict[str, Path] = {}
        self._heads: dict[str, bytes] = {}  # the first bytes of each file read by Range
        if self.offline:
            self._resolve_offline()
        else:
            self._resolve_online()

    # -- resolution ---------------------------------------------------------------------------------
    def _path(self, name: str) -> str:
        return f"{self.subfolder}/{name}" if self.subfolder else name

    def _take_listing(self, files: dict[str, int | None]) -> None:
        """Keep the files directly in the folder, hidden ones dropped, as LocalSource lists a directory."""
        self.repo_files = sorted(files)
        prefix = f"{self.subfolder}/" if self.subfolder else ""
        for path, size in files.items():
            rel = path[len(prefix):]
            if path.startswith(prefix) and rel and "/" not in rel and not rel.startswith("."):
                self._sizes[rel] = size

    def _resolve_online(self) -> None:
        from huggingface_hub import HfApi
        try:
            info = HfApi(endpoint=self.endpoint, token=self.token).model_info(
                self.repo_id, revision=self.revision, files_metadata=True)
        except Exception as e:  # noqa: BLE001 - every failure becomes one SourceError with a hint
            raise hub_error(e, self.label, endpoint=self.endpoint, revision=self.revision) from None
        if not info.sha:
            raise SourceError("the Hub did not say which commit the revision resolves to", path=self.label)
        self.sha = info.sha
        self._take_listing({s.rfilename: s.size for s in info.siblings or []})

    def _resolve_offline(self) -> None:
        from huggingface_hub.file_download import repo_folder_name
        storage = Path(self.cache_dir) / repo_folder_name(repo_id=self.repo_id, repo_type="model")
        sha = self.revision if _COMMIT_RE.match(self.revision) else None
        ref = storage / "refs" / self.revision
        if sha is None and ref.is_file():
            sha = ref.read_text().strip()
        snap = storage / "snapshots" / (sha or "-")
        if sha is None or not snap.is_dir():
            raise SourceError(f"offline mode (HF_HUB_OFFLINE) is on and {self.repo_id}@{self.revision} is not in "
                              f"the local cache ({self.cache_dir})", path=self.label,
                              hint="unset HF_HUB_OFFLINE, or download the repo first (hf download "
                                   f"{self.repo_id} --include '*.json' '*.safetensors')")
        self.sha = sha
        files = {p.relative_to(snap).as_posix(): p.stat().st_size for p in snap.rglob("*") if p.is_file()}
        self._take_listing(files)
        self._cached = {rel: snap / self._path(rel) for rel in self._sizes}

    def require_checkpoint(self) -> None:
        """Refuse, with the next step, a folder that holds no safetensors checkpoint to check."""
        names = list(self._sizes)
        gguf = self.file is not None or any(n.endswith(".gguf") for n in names)
        if self.offline and "config.json" not in names and not gguf:
            raise SourceError("offline mode (HF_HUB_OFFLINE) is on and config.json is not in the local cache",
                              path=self.label, hint=f"run online once, or hf download {self.repo_id}")
        if self.file is None and not any(n.endswith((".safetensors", ".gguf")) for n in names) \
                and INDEX not in names:
            if self.offline:
                raise SourceError("offline mode (HF_HUB_OFFLINE) is on and no .safetensors file of this repo is "
                                  "in the local cache; header checks need the cached files", path=self.label,
                                  hint=f"hf download {self.repo_id} --include '*.json' '*.safetensors', "
                                       "or unset HF_HUB_OFFLINE")
            where = f"{self.repo_id}/{self.subfolder}" if self.subfolder else self.repo_id
            folders = sorted({f.rsplit("/", 1)[0] for f in self.repo_files
                              if "/" in f and f.endswith(("config.json", ".safetensors"))})
            other = [n for n in names if n.endswith((".bin", ".pt", ".pth", ".gguf", ".ckpt"))]
            hint = (f"the drafter may be in a subfolder: --subfolder {folders[0]}" if folders else
                    f"found {', '.join(other[:3])}; publish safetensors" if other else
                    "is this the right repo? A drafter repo holds config.json and model*.safetensors")
            raise SourceError(f"not a safetensors checkpoint: no .safetensors files in {where} at "
                              f"{self.sha[:12]}", path=self.label, hint=hint)
        if self.offline and INDEX in self._cached:
            try:
                shards = set(json.loads(self._cached[INDEX].read_bytes()).get("weight_map", {}).values())
            except (OSError, ValueError, AttributeError):
                shards = set()
            missing = sorted(s for s in shards if isinstance(s, str) and s not in self._cached)
            if missing:
                raise SourceError(f"offline mode (HF_HUB_OFFLINE) is on and {len(missing)} shard(s) are not in the "
                                  f"local cache ({', '.join(missing[:3])})", path=self.label,
                                  hint="unset HF_HUB_OFFLINE, or download the missing shards")

    # -- the Source protocol --------------------------------------------------------------------------
    def list_files(self) -> list[str]:
        return sorted(self._sizes)

    def file_size(self, name: str) -> int:
        if name not in self._sizes:
            raise SourceError(f"{name} is not in {self.label} at commit {self.sha[:12]}", path=self.label)
        size = self._sizes[name]
        if size is None:                    # the listing had no sizes: ask for this file's metadata
            size = self._head(name)
            self._sizes[name] = size
        return size

    def read_range(self, name: str, start: int, length: int) -> bytes:
        size = self.file_size(name)
        length = max(0, min(length, size - start))
        if name in self._cached:
            with open(self._cached[name], "rb") as f:
                f.seek(start)
                return f.read(length)
        if self.offline:
            raise SourceError(f"offline mode (HF_HUB_OFFLINE) is on and {name} is not in the local cache",
                              path=self.label, hint="unset HF_HUB_OFFLINE, or download the file first")
        if name.endswith(".json") and size <= _CACHE_JSON_MAX:
            self.download(name)             # config and index: whole, into the cache, for later offline use
            return self.read_range(name, start, length)
        if not length:
            return b""
        head = self._heads.get(name, b"")
        if start + length <= len(head):
            return head[start:start + length]
        if start == 0:
            # the header reader asks for 8 bytes, then the header: one request for both saves a round
            # trip (two, with the CDN redirect) at the cost of a few KiB
            head = self._get_range(name, 0, min(size, max(length, _READAHEAD)))
            self._heads[name] = head
            return head[:length]
        if head and start <= len(head):       # a header longer than the readahead: fetch the rest
            head += self._get_range(name, len(head), start + length - len(head))
            self._heads[name] = head
            return head[start:start + length]
        return self._get_range(name, start, length)

    def local_path(self, name: str) -> Path | None:
        return self._cached.get(name)

    def report_extra(self) -> dict[str, Any]:
        return {"source": "hub", "repo_id": self.repo_id, "revision": self.revision, "commit_sha": self.sha,
                "subfolder": self.subfolder, "offline": self.offline, "bytes_fetched": self.bytes_fetched}

    # -- transfers ----------------------------------------------------------------------------------------
    def _url(self, name: str) -> str:
        from huggingface_hub import hf_hub_url
        return hf_hub_url(self.repo_id, self._path(name), revision=self.sha, endpoint=self.endpoint)

    def _head(self, name: str) -> int:
        from huggingface_hub import get_hf_file_metadata
        try:
            meta = get_hf_file_metadata(self._url(name), token=self.token, endpoint=self.endpoint)
        except Exception as e:  # noqa: BLE001
            raise hub_error(e, self.label, endpoint=self.endpoint, revision=self.revision) from None
        if meta.size is None:
            raise SourceError(f"the Hub did not say how large {name} is", path=self.label)
        return meta.size

    def _get_range(self, name: str, start: int, length: int) -> bytes:
        """`length` bytes at `start` by one ranged GET; a server that ignores Range is cut off, never drained."""
        from huggingface_hub.utils import build_hf_headers, get_session, hf_raise_for_status
        headers = build_hf_headers(token=self.token)
        headers.update({"Range": f"bytes={start}-{start + length - 1}", "Accept-Encoding": "identity"})
        out = bytearray()
        try:
            with get_session().stream("GET", self._url(name), headers=headers, timeout=60) as r:
                if r.status_code >= 400:
                    r.read()
                    hf_raise_for_status(r)
                skip = start if r.status_code == 200 else 0
                for chunk in r.iter_bytes():
                    self.bytes_fetched += len(chunk)
                    if skip:
                        cut = min(skip, len(chunk))
                        chunk, skip = chunk[cut:], skip - cut
                    out += chunk
                    if len(out) >= length:
                        break
        except SourceError:
            raise
        except Exception as e:  # noqa: BLE001
            raise hub_error(e, self.label, endpoint=self.endpoint, revision=self.revision) from None
        return bytes(out[:length])

    def download(self, name: str) -> Path:
        """The whole file, through huggingface_hub's cache (smoke needs the weights); returns its path."""
        if name in self._cached:
            return self._cached[name]
        from huggingface_hub import hf_hub_download
        try:
            path = Path(hf_hub_download(
                self.repo_id, self._path(name), revision=self.sha or self.revision, cache_dir=self.cache_dir,
                token=self.token, endpoint=self.endpoint, local_files_only=self.offline,
                tqdm_class=None if sys.stderr.isatty() else _quiet_tqdm()))
        except Exception as e:  # noqa: BLE001
            raise hub_error(e, self.label, endpoint=self.endpoint, revision=self.revision) from None
        size = self._sizes.get(name)
        self.bytes_fetched += size if size is not None else path.stat().st_size
        self._cached[name] = path
        self._remember_ref()
        return path

    def _remember_ref(self) -> None:
        """Record branch -> commit in the cache as huggingface_hub does, so an offline run finds the snapshot."""
        if self.offline or not self.sha or self.revision == self.sha:
            return
        from huggingface_hub.file_download import repo_folder_name
        ref = Path(self.cache_dir) / repo_folder_name(repo_id=self.repo_id, repo_type="model") / "refs" / self.revision
        try:
            ref.parent.mkdir(parents=True, exist_ok=True)
            if not ref.is_file() or ref.read_text() != self.sha:
                ref.write_text(self.sha)
        except OSError:
            pass                            # a read-only cache only costs the offline shortcut


def open_source(path: str, revision: str | None = None, token: str | None = None, subfolder: str | None = None,
                *, require_weights: bool = True) -> Source:
    """A local path if it exists; else a Hub repo id `org/name[@rev][/subfolder]`; else "no such path"."""
    local = Path(os.path.expanduser(path))
    if local.exists():
        if revision:
            raise SourceError("--revision applies to Hub repos, and this is a local path", path=path,
                              hint="drop --revision, or give the repo id (org/name)")
        return LocalSource(local / subfolder if subfolder else local)
    ref = None if path.startswith((".", "/", "~")) or "\\" in path else parse_repo_ref(path)
    if ref is None:
        raise SourceError("no such file or directory, and not a Hub repo id", path=path,
                          hint="give a checkpoint directory, or a Hub repo as org/name or org/name@revision")
    if ref.revision and revision and ref.revision != revision:
        raise SourceError(f"two revisions given: @{ref.revision} and --revision {revision}", path=path,
                          hint="give the revision once")
    if ref.subfolder and subfolder and ref.subfolder.strip("/") != subfolder.strip("/"):
        raise SourceError(f"two subfolders given: /{ref.subfolder} and --subfolder {subfolder}", path=path,
                          hint="give the subfolder once")
    src = HubSource(ref.repo_id, revision=ref.revision or revision, subfolder=ref.subfolder or subfolder,
                    token=token)
    if require_weights:
        src.require_checkpoint()
        # fetch config.json now: a gated repo lists its files to anyone but serves them only to granted
        # tokens, and that must stop the run (exit 3), not turn into findings about unreadable files
        if "config.json" in src.list_files():
            src.read_range("config.json", 0, 1)
    return src
