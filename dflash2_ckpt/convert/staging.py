"""Destination complete or absent: a staging directory beside DST, renamed into place after verification.

Names carry the writer's pid, so a later run can tell a dead run's leftovers from a live one's:
  .DST.dflash2-tmp-<pid>-<token>   output being written; removed when its writer is dead
  .DST.dflash2-tmp-<pid>-<token>.owner   beside it: pid, process start time and host of the writer, so a
                                   recycled pid does not keep a dead run's staging alive for ever
  .DST.dflash2-old-<pid>-<token>   the previous DST moved aside by --force; if the writer died before the
                                   new DST was in place, it is moved back (the user's data is never lost)
Every conversion cleans the dead runs' staging of *any* destination in DST's parent, not only its own
(a killed run to another name would otherwise keep up to a checkpoint's size on disk), and says so.
"""

from __future__ import annotations

import errno
import json
import os
import re
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

from ..errors import ConversionUsageError

TMP, OLD = ".dflash2-tmp-", ".dflash2-old-"


def _name(dst: Path, tag: str) -> Path:
    # os.urandom, not secrets.token_hex: the same 8 hex digits without importing secrets (hmac, hashlib)
    return dst.parent / f".{dst.name}{tag}{os.getpid()}-{os.urandom(4).hex()}"


def _host() -> str:
    """This machine's name, as socket.gethostname() gives it (uname's nodename, without importing socket)."""
    if hasattr(os, "uname"):
        return os.uname().nodename
    import socket  # lazy: socket loads only on this path

    return socket.gethostname()


OWNER = ".owner"
# any run's staging or aside name, with its pid and, for staging, the owner record beside it
_ANY = re.compile(
    r"^\.(?P<dst>.+?)(?P<tag>" + re.escape(TMP) + "|" + re.escape(OLD) + r")(?P<pid>\d+)-[0-9a-f]+"
    r"(?P<owner>" + re.escape(OWNER) + ")?$"
)


def _started(pid: int) -> str | None:
    """The process's start time in clock ticks since boot (Linux /proc), or None where unknown."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return f.read().rsplit(b")", 1)[1].split()[19].decode()
    except (OSError, IndexError):
        return None


def _pid_alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError):
        return pid < 1 << 31
    return True


def _alive(pid: int, owner: Path | None = None) -> bool:
    """Is the run that made this entry still running? Its owner record, when there, must match the live
    process (same host, same start time); a recycled pid is not the writer."""
    if not _pid_alive(pid):
        return False
    if owner is None or pid == os.getpid():
        return True
    try:
        rec = json.loads(owner.read_text())
    except (OSError, ValueError):
        return True  # unreadable: being written, or not ours to judge
    if not isinstance(rec, dict) or rec.get("host") != _host():
        return True  # another machine's run on a shared disk: leave it
    return rec.get("start") is None or rec.get("start") == _started(pid)


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        import shutil  # only to remove a directory: a conversion that succeeds renames it

        shutil.rmtree(path, ignore_errors=True)
    else:
        try:
            path.unlink()
        except FileNotFoundError:
            pass


def clean_stale(dst: Path) -> list[str]:
    """Remove staging left by dead runs beside DST (for any destination in its folder); restore a DST a
    dead --force run moved aside. Returns what was done, one sentence each, for the report."""
    actions: list[str] = []
    if not dst.parent.is_dir():
        return actions
    for entry in sorted(dst.parent.iterdir()):
        m = _ANY.match(entry.name)
        if not m or m.group("owner"):
            continue
        owner = entry.with_name(entry.name + OWNER)
        if _alive(int(m.group("pid")), owner if m.group("tag") == TMP and os.path.lexists(owner) else None):
            continue
        target = entry.parent / m.group("dst")
        if m.group("tag") == OLD and not os.path.lexists(target):
            os.rename(entry, target)
            actions.append(f"restored {target} from {entry.name}, left aside by an interrupted run")
        else:
            size = _size(entry)
            _remove(entry)
            actions.append(
                f"removed {entry.name} ({size:,} bytes), left by an interrupted run (pid "
                f"{m.group('pid')}, no longer running)"
            )
        if os.path.lexists(owner):
            _remove(owner)
    for entry in sorted(dst.parent.iterdir()):  # an owner record whose staging is gone
        m = _ANY.match(entry.name)
        if m and m.group("owner") and not os.path.lexists(entry.with_name(entry.name[: -len(OWNER)])):
            _remove(entry)
    return actions


def _size(path: Path) -> int:
    if path.is_file() or path.is_symlink():
        return path.lstat().st_size
    total = 0
    for here, _, files in os.walk(path):
        for f in files:
            try:
                total += os.lstat(os.path.join(here, f)).st_size
            except OSError:
                pass
    return total


def make_staging(dst: Path) -> Path:
    dst.parent.mkdir(parents=True, exist_ok=True)
    tmp = _name(dst, TMP)
    owner = tmp.with_name(tmp.name + OWNER)
    with open(owner, "x") as f:  # written first: a staging directory never lacks one
        json.dump({"pid": os.getpid(), "start": _started(os.getpid()), "host": _host()}, f)
    try:
        tmp.mkdir()
    except BaseException:
        _remove(owner)
        raise
    return tmp


def exists_error(dst: str | os.PathLike[str]) -> Exception:
    return ConversionUsageError(
        f"{dst} already exists: another conversion put it there first",
        hint="pass --force to replace it once the new one verified",
    )


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
            raise exists_error(dst)
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
        try:
            os.rename(tmp, dst)
        except OSError as e:
            # DST appeared since it was claimed: a concurrent conversion to the same place won the race
            if e.errno in (errno.EEXIST, errno.ENOTEMPTY, errno.ENOTDIR, errno.EISDIR):
                raise exists_error(dst) from None
            raise
    fsync_dir(dst.parent)


def claim_destination(dst_path: Path, dst: str | os.PathLike[str], force: bool) -> list[str]:
    """Before any write: clear what an interrupted run left beside DST; refuse an existing DST without force.
    Returns what was cleaned, for the report."""

    cleaned = clean_stale(dst_path)
    if os.path.lexists(dst_path) and not force:
        raise ConversionUsageError(
            f"{dst} already exists", hint="pass --force to replace it once the new one verified"
        )
    return cleaned


@contextmanager
def staging_area(dst_path: Path, dst: str | os.PathLike[str]) -> Iterator[Path]:
    """The one write boundary of every conversion: a temporary directory beside DST that is gone on the way
    out whatever happens (after a successful install it has been renamed away), and an OSError (a full
    disk, an unwritable parent) turned into one WriteError that says nothing was left behind."""
    from .stream import WriteError  # cycle: dflash2_ckpt.convert.stream imports this module

    tmp: Path | None = None
    try:
        tmp = make_staging(dst_path)
        yield tmp
    except OSError as e:
        raise WriteError(
            f"writing the destination failed: {e.strerror or e}",
            path=str(dst),
            hint="nothing was left behind; free space or fix permissions and run again",
        ) from e
    finally:
        if tmp is not None:
            if os.path.lexists(tmp):
                _remove(tmp)
            _remove(tmp.with_name(tmp.name + OWNER))


def check_overlap(
    src: Path, dst: Path, inputs: Iterable[tuple[str, str | os.PathLike[str] | None]] = ()
) -> None:
    """The one destination check of every conversion kind (dialect, to GGUF, from GGUF): DST may not be
    SRC or another input of the run (the target, --tokenizer-from), lie inside one, or contain one:
    --force replaces DST wholesale, so a DST holding an input (a GGUF file's folder, a checkpoint's parent,
    the target directory) would delete it and its neighbours. DST may not be a symbolic link, nor a
    hard-linked file (the write guard's rules, sources/safe_write.py)."""

    d = dst.resolve()
    for label, given in [("source", src), *inputs]:
        if given is None or not os.path.lexists(given):
            continue  # a Hub repo id: nothing on this disk to overwrite
        s = Path(given).resolve()
        if s == d or s in d.parents or d in s.parents:
            what = "is" if s == d else "is inside" if s in d.parents else "contains"
            raise ConversionUsageError(
                f"the destination {dst} overlaps the {label} {given}: it {what} the "
                f"{label}, which is never modified",
                hint=f"write to a path outside the {label} and its folders",
            )
    if dst.is_symlink():
        raise ConversionUsageError(
            f"the destination {dst} is a symbolic link (to {os.readlink(dst)}); "
            "nothing is written through it",
            hint="write to another path, or remove the link",
        )
    if os.path.lexists(dst) and not os.path.isdir(dst):
        from ..sources.safe_write import check  # a GGUF file: the write guard's file rules

        check(dst, hint="write to another path, or remove the other names")
