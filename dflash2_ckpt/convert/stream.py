"""Streamed copy of tensor bytes from source shards into destination shards, checked as it is written.

The copy runs in the kernel (copy_file_range, as cp does), range by range, so no tensor is ever held in
memory. Holes in a sparse source (SEEK_DATA / SEEK_HOLE) are neither read nor written, so a sparse
real-shape checkpoint stays sparse.

What makes the destination exactly what the plan says, without a second pass that reads it back:
- a ledger of every write as the system call reported it (destination offset, length, source offset):
  when the copy ends it must cover the planned data runs exactly, with nothing short, shifted, skipped or
  written twice, and nothing inside a source hole (a new file is zeros until written);
- the source file is the same file, with the same size and modification time, after the copy as
  before it, so the bytes copied are the ones the plan's headers describe;
- the header is read back whole (it is small), and a spot check compares the first and last 64 KiB of
  every data run, and one 64 KiB sample at a random place in every 256 MiB, with the source.
The earlier full read-back cost a second read of both sides (about 1 CPU-s per GB, and disk reads
once the page cache no longer held the output); it only ever compared the page cache with the page cache,
so it caught nothing this ledger does not, except a stray write from outside the copy, which the spot
check catches where it lands at the edge of a run or in a sample.
Writeback is left to the kernel, as for `cp`, and the shard is fsync'd once every check passed. The file
grows as it is written and takes its planned size at the end (a trailing hole of a sparse source). Both
were measured against `cp && sync` (bench/RESULTS.md, convert): starting writeback of every 64 MiB step
ourselves (sync_file_range, which submits the I/O from this thread) and sizing the file before the
copy each cost time and CPU on a cold 4 GB copy (17.9 s and 13.6 s against 12.3 s, `cp && sync` 11.7 s).
"""

from __future__ import annotations

import errno
import os
import random
from dataclasses import dataclass, field

from ..errors import ConversionError, Dflash2Error
from .plan import OutShard

CHUNK = 16 << 20
STEP = 64 << 20  # bytes per copy_file_range call
SAMPLE = 64 << 10  # bytes compared at each spot-check place
SAMPLE_EVERY = 256 << 20  # one random sample per this many bytes of a run, besides both ends
Segment = tuple[int, int, bool]  # (offset relative to the tensor, length, holds data)
Run = tuple[int, int, int]  # (destination offset, length, source offset)


class WriteError(Dflash2Error):
    """Writing the destination failed (disk full, permissions, I/O error); nothing was left behind."""


def segments(fd: int, begin: int, end: int) -> list[Segment]:
    """Data and hole runs of [begin, end); one data run when the filesystem cannot tell."""
    out: list[Segment] = []
    pos = begin
    while pos < end:
        try:
            data = os.lseek(fd, pos, os.SEEK_DATA)
        except OSError as e:
            if e.errno != errno.ENXIO:  # no SEEK_DATA support: treat everything as data
                return [(0, end - begin, True)] if end > begin else []
            data = end  # nothing but hole up to the end of the file
        data = min(data, end)
        if data > pos:
            out.append((pos - begin, data - pos, False))
        if data >= end:
            break
        hole = min(os.lseek(fd, data, os.SEEK_HOLE), end)
        out.append((data - begin, hole - data, True))
        pos = hole
    return out


@dataclass
class Ledger:
    """Every byte run written to one destination file, as the system calls reported it, merged where
    one run continues the last on both sides."""

    runs: list[Run] = field(default_factory=list)

    def add(self, dst_at: int, n: int, src_at: int = -1) -> None:
        if n <= 0:
            return
        if self.runs:
            d, k, s = self.runs[-1]
            if d + k == dst_at and (s + k == src_at if s >= 0 else src_at < 0):
                self.runs[-1] = (d, k + n, s)
                return
        self.runs.append((dst_at, n, src_at))

    def matches(self, planned: list[Run]) -> bool:
        want = Ledger()
        for d, n, s in planned:
            want.add(d, n, s)
        return self.runs == want.runs


def pwrite_all(fd: int, data: memoryview, offset: int, ledger: Ledger | None = None) -> None:
    while len(data):
        n = os.pwrite(fd, data, offset)
        if ledger is not None:
            ledger.add(offset, n)
        data, offset = data[n:], offset + n


_NO_KERNEL_COPY = (errno.EXDEV, errno.ENOSYS, errno.EINVAL, errno.EOPNOTSUPP, errno.EPERM)


def copy_range(
    src_fd: int, start: int, length: int, dst_fd: int, out: int, buf: bytearray, ledger: Ledger
) -> None:
    """Copy bytes in the kernel (copy_file_range, like cp); through `buf` where that is unsupported.
    Each step goes into the ledger as the call reported it."""
    done = 0
    kernel = hasattr(os, "copy_file_range")
    while done < length:
        n = min(STEP, length - done)
        if kernel:
            try:
                got = os.copy_file_range(src_fd, dst_fd, n, start + done, out + done)
            except OSError as e:
                if e.errno not in _NO_KERNEL_COPY:
                    raise
                kernel = False
                continue
        else:
            if len(buf) < CHUNK:  # grown in place, once, so the caller keeps reusing it
                buf.extend(bytes(CHUNK - len(buf)))
            view = memoryview(buf)[: min(n, CHUNK)]
            got = os.preadv(src_fd, [view], start + done)
            if got > 0:
                pwrite_all(dst_fd, view[:got], out + done)
        if got <= 0:
            raise ConversionError(f"the source ended early at byte {start + done}; was it changed meanwhile?")
        ledger.add(out + done, got, start + done)
        done += got


def sample_places(length: int, rng: random.Random) -> list[tuple[int, int]]:
    """(offset, length) within a run of `length` bytes that the spot check compares: both ends, and one
    random place per SAMPLE_EVERY bytes (chosen at run time, so no fixed byte goes unchecked by design)."""
    if length <= 2 * SAMPLE:
        return [(0, length)] if length else []
    out = [(0, SAMPLE), (length - SAMPLE, SAMPLE)]
    for _ in range(length // SAMPLE_EVERY):
        out.append((rng.randrange(SAMPLE, length - 2 * SAMPLE + 1), SAMPLE))
    return out


class Snapshot:
    """The identity of an open source file, to tell that it was not replaced or rewritten meanwhile."""

    def __init__(self, fd: int) -> None:
        self.fd, self.key = fd, self._key(fd)

    @staticmethod
    def _key(fd: int) -> tuple[int, int, int, int, int]:
        st = os.fstat(fd)
        return st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns

    def unchanged(self) -> bool:
        return self._key(self.fd) == self.key


def source_changed(name: str) -> ConversionError:
    return ConversionError(
        f"the source {name} changed while it was being copied; the output was discarded",
        hint="run the conversion again once nothing writes to the source",
    )


def write_shard(src_path: str, dst_path: str, shard: OutShard) -> int:
    """Write one output shard and check it (see the module docstring); fsync it. Returns the tensor count."""
    src_fd = os.open(src_path, os.O_RDONLY)
    try:
        snap = Snapshot(src_fd)
        dst_fd = os.open(dst_path, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o644)
        try:
            pwrite_all(dst_fd, memoryview(shard.header), 0)
            copy_buf = bytearray()  # grows only if the kernel cannot copy
            ledger, planned, owners = Ledger(), [], []
            for t, (out_begin, _) in zip(shard.tensors, shard.offsets):
                for off, n, data in segments(src_fd, t.begin, t.end):
                    if data:
                        planned.append((out_begin + off, n, t.begin + off))
                        owners.append(t)
                        copy_range(src_fd, t.begin + off, n, dst_fd, out_begin + off, copy_buf, ledger)
            if os.fstat(dst_fd).st_size < shard.size:
                os.ftruncate(dst_fd, shard.size)  # a trailing hole of a sparse source (zeros)
            if not ledger.matches(planned):
                raise ConversionError(
                    f"the writes to {shard.name} do not cover the planned byte ranges exactly; "
                    "the output was discarded"
                )
            if os.pread(dst_fd, len(shard.header), 0) != shard.header:
                raise ConversionError(
                    f"the header read back from {shard.name} differs from the planned one; "
                    "the output was discarded"
                )
            rng = random.Random()
            for (d, n, s), t in zip(planned, owners):
                if not same_samples(src_fd, s, dst_fd, d, n, rng):
                    raise ConversionError(
                        f"{t.dst_name}: the bytes written to {shard.name} differ from the source "
                        f"({t.name} in {t.file}); the output was discarded"
                    )
            os.fsync(dst_fd)
            if not snap.unchanged():
                raise source_changed(shard.source)
        finally:
            os.close(dst_fd)
    finally:
        os.close(src_fd)
    return len(shard.tensors)


def same_samples(src_fd: int, src_at: int, dst_fd: int, dst_at: int, length: int, rng: random.Random) -> bool:
    """The spot check of one copied run: its sample places read equal on both sides."""
    for off, k in sample_places(length, rng):
        if os.pread(src_fd, k, src_at + off) != os.pread(dst_fd, k, dst_at + off):
            return False
    return True
