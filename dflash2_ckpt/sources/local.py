"""Checkpoint sources: where the bytes come from. A local directory here; Hub repos in hub.py.

Everything downstream (config parsing, header reading, checks) talks to a Source, so a local path
and a repo id with the same content produce the same report.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Protocol

from ..errors import SourceError, UnsafePathError
from ..findings import Finding

# config.json and the index are small; refuse to slurp anything absurd into memory
MAX_JSON_BYTES = 64 * 1024 * 1024


class Source(Protocol):
    """Everything callers use of a source; SourceBase gives the members a kind may not have."""

    label: str  # what the user typed, for messages

    @property
    def notes(self) -> tuple[Finding, ...]: ...  # how the folder was chosen (checkpoint.discover)
    @property
    def file(self) -> str | None: ...  # the one file named, when a path to one file was given (a .gguf)
    @property
    def root(self) -> Path | None: ...  # the directory on disk (local sources)
    @property
    def repo_id(self) -> str | None: ...  # Hub sources: the repo, the commit it resolved to, the subfolder
    @property
    def sha(self) -> str | None: ...
    @property
    def subfolder(self) -> str | None: ...

    def list_files(self) -> list[str]: ...  # relative POSIX paths, sorted
    def file_size(self, name: str) -> int: ...
    def read_range(self, name: str, start: int, length: int) -> bytes: ...
    def local_path(self, name: str) -> Path | None: ...  # a real file on disk, when there is one
    def download(self, name: str) -> Path | None: ...  # fetch a remote file to disk (None: cannot)
    def report_extra(self) -> dict[str, Any]: ...  # what a report adds about the source


class SourceBase:
    """Defaults for the Source members that only some kinds of source fill."""

    notes: tuple[Finding, ...] = ()
    file: str | None = None
    root: Path | None = None
    repo_id: str | None = None
    sha: str | None = None
    subfolder: str | None = None

    def download(self, name: str) -> Path | None:
        return None

    def report_extra(self) -> dict[str, Any]:
        return {}


class LocalSource(SourceBase):
    """A checkpoint directory on disk. Only regular files inside the directory are ever opened."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        p = Path(path)
        self.file: str | None = None  # the file named, when a path to one file was given (a .gguf)
        if p.is_file():
            self.file = p.name
            p = p.parent
        if not p.exists():
            raise SourceError(
                "no such file or directory",
                path=str(path),
                hint="give a checkpoint directory or a Hub repo id (org/name)",
            )
        if not p.is_dir():
            raise SourceError("not a directory", path=str(path))
        if not os.access(p, os.R_OK | os.X_OK):
            raise SourceError("directory is not readable (permission denied)", path=str(path))
        self.root: Path = p.resolve()
        self.label = str(path)
        self.blobs = cache_blobs(self.root)

    def list_files(self) -> list[str]:
        out = []
        for entry in sorted(self.root.iterdir()):
            if entry.name.startswith("."):
                continue
            out.append(entry.name)
        return out

    def resolve(self, name: str) -> Path:
        """The real path of `name`, refused when it would leave the checkpoint directory."""
        # a NUL byte makes the OS calls raise ValueError, not OSError: refuse it with the rest
        if (
            not name
            or "\x00" in name
            or os.path.isabs(name)
            or name.startswith(("/", "\\"))
            or ".." in Path(name).parts
        ):
            raise UnsafePathError(
                f"file name {name!r} is absolute or climbs out of the checkpoint",
                path=self.label,
                hint="shard names must be plain file names inside the checkpoint",
            )
        p = self.root / name
        try:
            real = p.resolve(strict=False)
        except (OSError, RuntimeError, ValueError) as e:
            raise SourceError(f"cannot resolve {name!r}: {e}", path=self.label) from None
        if real != self.root and self.root not in real.parents and not self._cached_blob(real):
            raise UnsafePathError(
                f"{name!r} is a link that leaves the checkpoint directory (to {real})",
                path=self.label,
                hint="copy the file into the checkpoint instead of linking it",
            )
        return real

    def _cached_blob(self, real: Path) -> bool:
        """In a Hugging Face cache snapshot every file is a link to a blob of the same cache repository."""
        return self.blobs is not None and real.parent == self.blobs

    def file_size(self, name: str) -> int:
        p = self.resolve(name)
        try:
            return p.stat().st_size
        except OSError as e:
            raise SourceError(f"cannot stat {name}: {e.strerror}", path=self.label) from None

    def read_range(self, name: str, start: int, length: int) -> bytes:
        p = self.resolve(name)
        # open() on a FIFO or a device blocks or never ends: only regular files are read
        if not p.is_file():
            raise SourceError(f"{name} is not a regular file", path=self.label)
        try:
            with open(p, "rb") as f:
                f.seek(start)
                return f.read(length)
        except OSError as e:
            raise SourceError(f"cannot read {name}: {e.strerror}", path=str(p)) from None

    def local_path(self, name: str) -> Path | None:
        return self.resolve(name)


def cache_blobs(root: Path) -> Path | None:
    """The blobs/ folder of the Hugging Face cache repository whose snapshot holds `root`, if it is one:
    `<cache>/models--org--name/snapshots/<revision>[/subfolder]`, as huggingface_hub lays it out
    (huggingface_hub file_download.py: blobs/, snapshots/, refs/ under one repo folder)."""
    for snapshot in (root, *root.parents):
        snapshots = snapshot.parent
        repo = snapshots.parent
        if snapshots.name == "snapshots" and repo.name.startswith(("models--", "datasets--", "spaces--")):
            blobs = repo / "blobs"
            return blobs if blobs.is_dir() and not blobs.is_symlink() else None
    return None


def read_small(source: Source, name: str) -> bytes:
    """Whole content of a small JSON file through any source, with the size cap."""
    size = source.file_size(name)
    if size > MAX_JSON_BYTES:
        raise SourceError(
            f"{name} is {size} bytes; a config or index over {MAX_JSON_BYTES} bytes is refused",
            path=source.label,
        )
    return source.read_range(name, 0, size)
