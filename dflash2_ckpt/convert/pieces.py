"""Write one output file from a header and pieces, each a byte range of a source file (copied in the kernel,
holes kept) or bytes computed in memory (a type change), checked as they are written.

The GGUF conversions use it in both directions; the dialect conversion's shard writer (stream.py) is the
same idea for contiguous safetensors shards, and its copy, ledger and spot-check primitives are reused
here: every write goes into a ledger that must cover the planned runs exactly, the header is read back
whole, each copied run and each computed piece is spot-checked at its ends and at random places, and the
source files must be unchanged at the end. Computed bytes are checked in memory before they are written
(their length against the plan) and then let go, so memory holds one tensor at a time, or one chunk of
one where the piece is made in chunks (a dequantized tensor: its float32 values are 2-8x the stored bytes).
"""

from __future__ import annotations

import os
import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from ..errors import ConversionError
from .stream import (
    Ledger,
    Run,
    Snapshot,
    copy_range,
    pwrite_all,
    same_samples,
    sample_places,
    segments,
    source_changed,
)


@dataclass(frozen=True)
class Piece:
    name: str  # the destination tensor, for messages
    out_begin: int  # absolute offset in the output file
    src_file: Path | None  # a byte copy from this file ...
    src_begin: int = 0
    src_end: int = 0
    data: bytes = b""  # ... or these bytes
    # ... or bytes computed when the piece is written (a dequantized tensor): `length` of them, made,
    # written and checked one piece at a time, so memory holds one tensor, never the file
    compute: Callable[[], bytes | memoryview] | None = None
    # ... or computed in consecutive chunks (`length` bytes in all), each written and checked before the next
    # is made: memory holds one chunk, not the tensor
    chunks: Callable[[], Iterator[bytes | memoryview]] | None = None
    length: int = 0

    @property
    def nbytes(self) -> int:
        if self.src_file is not None:
            return self.src_end - self.src_begin
        return self.length if self.compute is not None or self.chunks is not None else len(self.data)


def _differs(name: str, dst: Path) -> ConversionError:
    return ConversionError(
        f"{name}: the bytes written to {dst.name} differ from what was planned; the output was discarded"
    )


def write_pieces(dst: Path, header: bytes, size: int, pieces: list[Piece]) -> int:
    """Create `dst` (never an existing file), write and check every piece, fsync.
    Returns how many pieces were verified."""
    fds: dict[Path, tuple[int, Snapshot]] = {}
    dst_fd = os.open(dst, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o644)
    rng = random.Random()
    try:
        pwrite_all(dst_fd, memoryview(header), 0)
        # the file grows as it is written and writeback is left to the kernel, as in the dialect copy
        # (stream.py's docstring has the measurement); holes and padding between pieces read as zeros
        copy_buf = bytearray()
        ledger = Ledger()
        planned: list[Run] = []
        copied: list[tuple[Run, int, str]] = []
        for p in pieces:
            if p.chunks is not None:
                _write_chunks(dst_fd, dst, p, planned, ledger, rng)
                continue
            if p.src_file is None:
                data = p.compute() if p.compute is not None else p.data
                if len(data) != p.nbytes:
                    raise ConversionError(f"internal: {p.name} computed {len(data)} bytes, not {p.nbytes}")
                planned.append((p.out_begin, len(data), -1))
                pwrite_all(dst_fd, memoryview(data), p.out_begin, ledger)
                if not _same_as_memory(dst_fd, p.out_begin, data, rng):
                    raise _differs(p.name, dst)
                del data  # one computed tensor in memory at a time
                continue
            if p.src_file not in fds:
                fd = os.open(p.src_file, os.O_RDONLY)
                fds[p.src_file] = (fd, Snapshot(fd))
            fd = fds[p.src_file][0]
            for off, n, has_data in segments(fd, p.src_begin, p.src_end):
                if has_data:
                    run = (p.out_begin + off, n, p.src_begin + off)
                    planned.append(run)
                    copied.append((run, fd, p.name))
                    copy_range(fd, p.src_begin + off, n, dst_fd, p.out_begin + off, copy_buf, ledger)
        if os.fstat(dst_fd).st_size < size:
            os.ftruncate(dst_fd, size)  # trailing padding or a trailing hole: zeros, only ever grown
        if not ledger.matches(planned):
            raise ConversionError(
                f"the writes to {dst.name} do not cover the planned byte ranges exactly; the "
                "output was discarded"
            )
        if os.pread(dst_fd, len(header), 0) != header:
            raise ConversionError(f"the header read back from {dst.name} differs; the output was discarded")
        for (d, n, s), fd, name in copied:
            if not same_samples(fd, s, dst_fd, d, n, rng):
                raise _differs(name, dst)
        os.fsync(dst_fd)
        for path, (_, snap) in fds.items():
            if not snap.unchanged():
                raise source_changed(path.name)
    finally:
        os.close(dst_fd)
        for fd, _ in fds.values():
            os.close(fd)
    return len(pieces)


def _write_chunks(
    dst_fd: int, dst: Path, p: Piece, planned: list[Run], ledger: Ledger, rng: random.Random
) -> None:
    at, end = p.out_begin, p.out_begin + p.nbytes
    chunks = p.chunks() if p.chunks is not None else iter(())
    # `next` before binding: the previous chunk is already released when the next one is made
    while (data := next(chunks, None)) is not None:
        n = memoryview(data).nbytes
        if at + n > end:
            raise ConversionError(f"internal: {p.name} computed more than its {p.nbytes} bytes")
        planned.append((at, n, -1))
        pwrite_all(dst_fd, memoryview(data), at, ledger)
        if not _same_as_memory(dst_fd, at, data, rng):
            raise _differs(p.name, dst)
        del data
        at += n
    if at != end:
        raise ConversionError(f"internal: {p.name} computed {at - p.out_begin} bytes, not {p.nbytes}")


def _same_as_memory(dst_fd: int, at: int, data: bytes | memoryview, rng: random.Random) -> bool:
    view = memoryview(data).cast("B")
    return all(
        os.pread(dst_fd, k, at + off) == view[off : off + k] for off, k in sample_places(len(view), rng)
    )
