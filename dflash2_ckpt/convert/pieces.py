"""Write one output file from a header and pieces, each a byte range of a source file (copied in the kernel,
holes kept) or bytes computed in memory (a type change); then read every piece back and compare.

The GGUF conversions use it in both directions; the dialect conversion's shard writer (stream.py) is the
same idea for contiguous safetensors shards, and its copy and compare primitives are reused here.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from ..errors import ConversionError
from .stream import CHUNK, Buffers, _copy_range, _pwrite_all, _same_bytes, _zero_run, make_buffers, segments


@dataclass(frozen=True)
class Piece:
    name: str                 # the destination tensor, for messages
    out_begin: int            # absolute offset in the output file
    src_file: Path | None     # a byte copy from this file ...
    src_begin: int = 0
    src_end: int = 0
    data: bytes = b""         # ... or these bytes
    # ... or bytes computed when the piece is written (a dequantized tensor): `length` of them, made,
    # written and compared one piece at a time, so memory holds one tensor, never the file
    compute: Callable[[], bytes] | None = None
    length: int = 0

    @property
    def nbytes(self) -> int:
        if self.src_file is not None:
            return self.src_end - self.src_begin
        return self.length if self.compute is not None else len(self.data)


def write_pieces(dst: Path, header: bytes, size: int, pieces: list[Piece]) -> int:
    """Create `dst` (never an existing file), write, compare every piece with its source, fsync.
    Returns how many pieces were verified."""
    from concurrent.futures import ThreadPoolExecutor
    fds: dict[Path, int] = {}
    dst_fd = os.open(dst, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o644)
    try:
        with ThreadPoolExecutor(1) as pool:
            bufs = make_buffers(pool)
            _pwrite_all(dst_fd, memoryview(header), 0)
            os.ftruncate(dst_fd, size)               # padding and unwritten holes read as zeros
            copy_buf = bytearray()
            for p in pieces:
                if p.compute is not None:
                    _write_computed(dst, dst_fd, p)
                    continue
                if p.src_file is None:
                    _pwrite_all(dst_fd, memoryview(p.data), p.out_begin)
                    continue
                fd = fds.get(p.src_file)
                if fd is None:
                    fd = fds[p.src_file] = os.open(p.src_file, os.O_RDONLY)
                for off, n, data in segments(fd, p.src_begin, p.src_end):
                    if data:
                        _copy_range(fd, p.src_begin + off, n, dst_fd, p.out_begin + off, copy_buf)
            os.fsync(dst_fd)
            for p in pieces:
                if p.compute is None and not _same(bufs, fds, dst_fd, p):
                    raise ConversionError(f"{p.name}: the bytes read back from {dst.name} differ from what was "
                                          "written; the output was discarded")
            if os.pread(dst_fd, len(header), 0) != header:
                raise ConversionError(f"the header read back from {dst.name} differs; the output was discarded")
    finally:
        os.close(dst_fd)
        for fd in fds.values():
            os.close(fd)
    return len(pieces)


def _write_computed(dst: Path, dst_fd: int, p: Piece) -> None:
    """Make the piece's bytes, write them, read them back and compare, then let them go."""
    assert p.compute is not None
    data = p.compute()
    if len(data) != p.length:
        raise ConversionError(f"internal: {p.name} computed {len(data)} bytes, not {p.length}")
    _pwrite_all(dst_fd, memoryview(data), p.out_begin)
    if not _same_data(dst_fd, p.out_begin, data):
        raise ConversionError(f"{p.name}: the bytes read back from {dst.name} differ from what was written; "
                              "the output was discarded")


def _same_data(dst_fd: int, at: int, data: bytes) -> bool:
    done = 0
    while done < len(data):
        k = min(CHUNK, len(data) - done)
        if os.pread(dst_fd, k, at + done) != data[done:done + k]:
            return False
        done += k
    return True


def _same(bufs: Buffers, fds: dict[Path, int], dst_fd: int, p: Piece) -> bool:
    if p.src_file is None:
        return _same_data(dst_fd, p.out_begin, p.data)
    fd = fds[p.src_file]
    for off, n, data in segments(fd, p.src_begin, p.src_end):
        ok = (_same_bytes(bufs, fd, p.src_begin + off, dst_fd, p.out_begin + off, n) if data
              else _zero_run(bufs, dst_fd, p.out_begin + off, n))
        if not ok:
            return False
    return True
