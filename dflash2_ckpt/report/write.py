"""Report files (`--output`, audit's `-o`, the Action's SARIF and JSON): written whole or not at all,
never through a symbolic link unless asked, never over a file of the checkpoint being read.

A report path may come from a pull request (the Action's `sarif-file`, a committed link named like the
report) or point back into the drafter (`--output json=DRAFTER/config.json`, `../`). Each destination is
checked first, every file is rendered into a temporary file in its destination's folder, and only when
all are complete are they renamed into place: a failure leaves every destination as it was. A character
device or named pipe (/dev/stdout, /dev/null, a FIFO) is a stream, written in place; a block device or
socket is refused.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Collection, Iterable
from pathlib import Path
from typing import IO

from ..sources.names import is_checkpoint_file
from ..sources.safe_write import Inputs, check, new_file_mode, replace, temp_beside

FOLLOW_HINT = "write to another path, or pass --output-follow-symlinks to write to the link's target"


def files_read(paths: Iterable[str]) -> set[tuple[int, int]]:
    """(device, inode) of every checkpoint file among `paths` (the command's path arguments): a file named
    itself, and the checkpoint files in a folder named and in its subfolders one level down. Inodes, so a
    link, a `../` or a hard link to one of them is recognised too."""
    out: set[tuple[int, int]] = set()
    for p in paths:
        try:
            if os.path.isfile(p):
                candidates = [p]
            elif os.path.isdir(p):
                top = [os.path.join(p, n) for n in os.listdir(p)]
                candidates = [c for c in top if is_checkpoint_file(os.path.basename(c))]
                for sub in (c for c in top if os.path.isdir(c) and not os.path.islink(c)):
                    candidates += [os.path.join(sub, n) for n in os.listdir(sub) if is_checkpoint_file(n)]
            else:
                continue
            for c in candidates:
                st = os.stat(c)
                out.add((st.st_dev, st.st_ino))
        except (OSError, ValueError):
            continue  # unreadable: nothing of it is read, nothing to protect
    return out


def destination(
    path: str,
    *,
    follow_symlinks: bool = False,
    reading: Collection[tuple[int, int]] = (),
    inputs: Inputs = Inputs(),
) -> Path:
    """The file to write for the report path `path`, or UnsafeOutputError saying why not (the one write
    guard, sources/safe_write.py: no link, no hard-linked file, no file this command reads, nothing that
    exists under the `inputs` directories: the target, the reference)."""
    p = Path(path)
    if _stream(p):
        return p  # /dev/stdout, /dev/null, a named pipe: written as a stream, nothing replaced
    return check(
        p,
        reading=Inputs(frozenset(reading)) | inputs,
        follow_symlinks=follow_symlinks,
        hint="write the report to another file",
        link_hint=FOLLOW_HINT,
    )


def write_files(items: Iterable[tuple[Path, Callable[[IO[str]], object]]]) -> None:
    """Each (destination, fill) rendered into a private temporary file beside its destination, then all
    renamed into place; on any failure the temporary files go and every destination is left as it was."""
    items = list(items)
    temps: list[Path] = []
    try:
        for dest, fill in items:
            if _stream(dest):
                with open(dest, "w", encoding="utf-8") as f:
                    fill(f)
                continue
            mode = new_file_mode(dest)
            fd, tmp = temp_beside(dest)
            temps.append(tmp)
            with open(fd, "w", encoding="utf-8") as f:
                fill(f)
            os.chmod(tmp, mode)
        for dest, tmp in zip((d for d, _ in items if not _stream(d)), temps):
            replace(tmp, dest)
    except BaseException:
        for tmp in temps:
            try:
                os.unlink(tmp)
            except OSError:
                pass
        raise


def _stream(p: Path) -> bool:
    """A character device or a named pipe (through links: /dev/stdout): written in place, as a stream."""
    try:
        mode = p.stat().st_mode
    except (OSError, ValueError):
        return False
    return stat.S_ISCHR(mode) or stat.S_ISFIFO(mode)
