"""Destination complete or absent: a staging directory beside DST, renamed into place after verification.

Names carry the writer's pid, so a later run can tell a dead run's leftovers from a live one's:
  .DST.dflash2-tmp-<pid>-<token>   output being written; removed when its writer is dead
  .DST.dflash2-old-<pid>-<token>   the previous DST moved aside by --force; if the writer died before the
                                   new DST was in place, it is moved back (the user's data is never lost)
"""
from __future__ import annotations

import os
import re
import secrets
import shutil
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

TMP, OLD = ".dflash2-tmp-", ".dflash2-old-"


def _name(dst: Path, tag: str) -> Path:
    return dst.parent / f".{dst.name}{tag}{os.getpid()}-{secrets.token_hex(4)}"


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        try:
            path.unlink()
        except FileNotFoundError:
            pass


def clean_stale(dst: Path) -> list[str]:
    """Remove staging left by dead runs for this DST; restore a DST a dead --force run moved aside."""
    actions: list[str] = []
    if not dst.parent.is_dir():
        return actions
    tags = re.escape(TMP) + "|" + re.escape(OLD)
    pattern = re.compile(re.escape(f".{dst.name}") + f"({tags})" + r"(\d+)-[0-9a-f]+$")
    for entry in sorted(dst.parent.iterdir()):
        m = pattern.match(entry.name)
        if not m or _alive(int(m.group(2))):
            continue
        if m.group(1) == OLD and not os.path.lexists(dst):
            os.rename(entry, dst)
            actions.append(f"restored {dst} from {entry.name}, left aside by an interrupted run")
        else:
            _remove(entry)
            actions.append(f"removed {entry.name}, left by an interrupted run")
    return actions


def make_staging(dst: Path) -> Path:
    dst.parent.mkdir(parents=True, exist_ok=True)
    tmp = _name(dst, TMP)
    tmp.mkdir()
    return tmp


def fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def install(tmp: Path, dst: Path, force: bool) -> None:
    """Rename the verified staging directory to DST; with force, the old DST goes only once the new is in."""
    fsync_dir(tmp)
    if os.path.lexists(dst):
        if not force:
            raise FileExistsError(str(dst))
        old = _name(dst, OLD)
        os.rename(dst, old)
        try:
            os.rename(tmp, dst)
        except BaseException:
            os.rename(old, dst)
            raise
        fsync_dir(dst.parent)
        _remove(old)
    else:
        os.rename(tmp, dst)
    fsync_dir(dst.parent)


def claim_destination(dst_path: Path, dst: str | os.PathLike[str], force: bool) -> list[str]:
    """Before any write: clear what an interrupted run left beside DST; refuse an existing DST without force.
    Returns what was cleaned, for the report."""
    from ..errors import ConversionUsageError
    cleaned = clean_stale(dst_path)
    if os.path.lexists(dst_path) and not force:
        raise ConversionUsageError(f"{dst} already exists", hint="pass --force to replace it once the new one verified")
    return cleaned


@contextmanager
def staging_area(dst_path: Path, dst: str | os.PathLike[str]) -> Iterator[Path]:
    """The one write boundary of every conversion: a temporary directory beside DST that is gone on the way
    out whatever happens (after a successful install it has been renamed away), and an OSError (a full
    disk, an unwritable parent) turned into one WriteError that says nothing was left behind."""
    from .stream import WriteError
    tmp: Path | None = None
    try:
        tmp = make_staging(dst_path)
        yield tmp
    except OSError as e:
        raise WriteError(f"writing the destination failed: {e.strerror or e}", path=str(dst),
                         hint="nothing was left behind; free space or fix permissions and run again") from e
    finally:
        if tmp is not None and os.path.lexists(tmp):
            _remove(tmp)
