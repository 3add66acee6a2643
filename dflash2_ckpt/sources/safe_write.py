"""The one write guard: every file this toolkit writes (reports, receipts, model cards, --fix rewrites,
conversion outputs, caches) goes through here.

A destination is refused (UnsafeOutputError: exit 2, with the path) when it is a symbolic link, a file
with another hard link (writing would change the other name's content too), not a regular file, or an
input of the same run: a file read, or anything under a directory read (the source, the reference, the
target). Data is written into a temporary file created beside the destination with
O_CREAT|O_EXCL|O_NOFOLLOW under a random private name (a planted `.NAME.tmp` link is never followed or
reused), made durable, then renamed over the destination; the destination is checked again just before
the rename, so a link planted meanwhile is refused too.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from ..errors import UnsafeOutputError

__all__ = [
    "Inputs",
    "inputs",
    "check",
    "temp_beside",
    "replace",
    "write_bytes",
    "write_text",
    "write_with",
    "TEMP_TAG",
]

TEMP_TAG = ".dflash2-ckpt-"  # in every temporary file's name: `.NAME.dflash2-ckpt-RANDOM.SUFFIX`
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)


@dataclass(frozen=True)
class Inputs:
    """What a run reads, so that nothing it writes lands on it: file identities, and directories whose
    existing files (at any depth) are never overwritten."""

    files: frozenset[tuple[int, int]] = frozenset()  # (device, inode)
    dirs: tuple[Path, ...] = field(default=())  # real paths

    def holds(self, p: Path) -> str | None:
        """Why `p` (an existing or planned destination) is an input, or None."""
        try:
            st = os.stat(p)
            if (st.st_dev, st.st_ino) in self.files:
                return "is a file this command reads (of the checkpoint, or an input)"
        except (OSError, ValueError):
            pass
        real = Path(os.path.realpath(p))
        for d in self.dirs:
            if real == d:
                return "is a directory this command reads"
            if d in real.parents and os.path.lexists(p):
                # a new file beside the inputs (a report in the checked-out repository) harms nothing
                return f"is a file inside {d}, a directory this command reads"
        return None

    def __or__(self, other: Inputs) -> Inputs:
        return Inputs(self.files | other.files, self.dirs + other.dirs)


def inputs(paths: Iterable[str | os.PathLike[str] | None], *, dirs: bool = True) -> Inputs:
    """The inputs among `paths` that exist here (a Hub repo id is not a path: skipped). A directory protects
    everything under it (with `dirs`); a file protects its inode, so a link to it or a hard link is
    recognised too."""
    files: set[tuple[int, int]] = set()
    folders: list[Path] = []
    for p in paths:
        if p is None:
            continue
        try:
            st = os.stat(p)
        except (OSError, ValueError):
            continue
        if stat.S_ISDIR(st.st_mode):
            if dirs:
                folders.append(Path(os.path.realpath(p)))
        else:
            files.add((st.st_dev, st.st_ino))
    return Inputs(frozenset(files), tuple(folders))


def _refuse(path: str | os.PathLike[str], why: str, hint: str) -> UnsafeOutputError:
    return UnsafeOutputError(f"{why}; nothing was written there", path=str(path), hint=hint)


def check(
    path: str | os.PathLike[str],
    *,
    reading: Inputs = Inputs(),
    follow_symlinks: bool = False,
    hint: str = "write to another path",
    link_hint: str | None = None,
) -> Path:
    """The file to write for `path`, or UnsafeOutputError saying why not (`link_hint`: the next step for
    a symbolic link, where it differs). With `follow_symlinks`, a link is resolved (the user asked to
    write to its target) and the target is judged."""
    p = Path(path)
    if follow_symlinks:
        p = Path(os.path.realpath(p))
    else:
        # the file itself, and the folders of a relative path: those a checkout (a pull request) can hold
        links = [p] + ([] if p.is_absolute() else [Path(*p.parts[:i]) for i in range(1, len(p.parts))])
        for link in links:
            if link.is_symlink():
                what = "is" if link == p else f"has a folder, {link}, that is"
                raise _refuse(
                    path,
                    f"{what} a symbolic link (to {os.readlink(link)}); a file is not written through it",
                    link_hint or hint,
                )
    try:
        st = os.lstat(p)
    except FileNotFoundError:
        st = None
    except (OSError, ValueError) as e:
        raise _refuse(path, f"cannot be examined ({e})", hint) from None
    if st is not None:
        if stat.S_ISDIR(st.st_mode):
            raise _refuse(path, "is a directory, not a file", "name a file inside it")
        if not stat.S_ISREG(st.st_mode):
            raise _refuse(path, "is not a regular file (a device or socket)", hint)
        if st.st_nlink > 1:
            raise _refuse(
                path,
                f"is a hard-linked file ({st.st_nlink} names share its content); writing "
                "would change the other names too",
                hint + ", or copy the file first",
            )
    why = reading.holds(p)
    if why:
        raise _refuse(path, f"{why}; it would be overwritten", hint)
    return p


def temp_beside(dest: Path, suffix: str = ".tmp", mode: int = 0o600) -> tuple[int, Path]:
    """A new temporary file in dest's folder, opened for writing: O_EXCL|O_NOFOLLOW under a random
    private name, so no planted file or link is ever opened. Returns (fd, path)."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC
    for _ in range(16):
        tmp = dest.with_name(f".{dest.name}{TEMP_TAG}{os.urandom(6).hex()}{suffix}")
        try:
            return os.open(tmp, flags, mode), tmp
        except FileExistsError:
            continue
    raise FileExistsError(f"no free temporary name beside {dest}")


def replace(tmp: Path, dest: Path, *, reading: Inputs = Inputs()) -> None:
    """Rename `tmp` over `dest`, judging dest again first: a link planted since it was checked is refused."""
    check(dest, reading=reading)
    os.replace(tmp, dest)


def new_file_mode(dest: Path) -> int:
    """An existing file keeps its mode; a new one gets what open() would give it (0666 less the umask)."""
    try:
        return os.lstat(dest).st_mode & 0o7777
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


def write_with(
    dest: str | os.PathLike[str],
    fill: Callable[[IO[bytes]], object],
    *,
    reading: Inputs = Inputs(),
    checked: bool = False,
    durable: bool = True,
) -> Path:
    """`fill` writes the content into a private temporary file beside `dest`, which then replaces `dest`
    atomically. On any failure the temporary file goes and `dest` is as it was."""
    p = Path(dest) if checked else check(dest, reading=reading)
    mode = new_file_mode(p)
    fd, tmp = temp_beside(p)
    try:
        with os.fdopen(fd, "wb") as fh:
            fill(fh)
            fh.flush()
            if durable:
                os.fsync(fh.fileno())
        os.chmod(tmp, mode)
        replace(tmp, p, reading=reading)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    return p


def write_bytes(
    dest: str | os.PathLike[str], data: bytes, *, reading: Inputs = Inputs(), durable: bool = True
) -> Path:
    return write_with(dest, lambda fh: fh.write(data), reading=reading, durable=durable)


def write_text(
    dest: str | os.PathLike[str], text: str, *, reading: Inputs = Inputs(), durable: bool = True
) -> Path:
    return write_bytes(dest, text.encode("utf-8"), reading=reading, durable=durable)
