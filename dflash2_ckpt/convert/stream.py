"""Streamed copy of tensor bytes from source shards into destination shards, and its read-back check.

The copy runs in the kernel (copy_file_range, as cp does), range by range, so no tensor is ever held in
memory. Holes in a sparse source (SEEK_DATA / SEEK_HOLE) are neither read nor written, so a sparse
real-shape checkpoint stays sparse. Each written tensor is read back from the destination and compared
with the source byte for byte (two bounded 16 MiB buffers, memcmp) in a second thread while the next
tensor is copied: a stricter check than comparing hashes, and about three times cheaper in CPU than
hashing both sides with SHA-256. Where the source is a hole, the destination must read as zeros.
The shard is fsync'd only once every tensor compared equal.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import errno
import os
from concurrent.futures import Future, ThreadPoolExecutor, wait
from dataclasses import dataclass

from ..errors import ConversionError, Dflash2Error
from .plan import OutShard, TensorAction

CHUNK = 16 << 20
Segment = tuple[int, int, bool]    # (offset relative to the tensor, length, holds data)


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
            if e.errno != errno.ENXIO:        # no SEEK_DATA support: treat everything as data
                return [(0, end - begin, True)] if end > begin else []
            data = end                         # nothing but hole up to the end of the file
        data = min(data, end)
        if data > pos:
            out.append((pos - begin, data - pos, False))
        if data >= end:
            break
        hole = min(os.lseek(fd, data, os.SEEK_HOLE), end)
        out.append((data - begin, hole - data, True))
        pos = hole
    return out


def _pwrite_all(fd: int, data: memoryview, offset: int) -> None:
    while len(data):
        n = os.pwrite(fd, data, offset)
        data, offset = data[n:], offset + n


_NO_KERNEL_COPY = (errno.EXDEV, errno.ENOSYS, errno.EINVAL, errno.EOPNOTSUPP, errno.EPERM)


def _copy_range(src_fd: int, start: int, length: int, dst_fd: int, out: int, buf: bytearray) -> None:
    """Copy bytes in the kernel (copy_file_range, like cp); through `buf` where that is unsupported."""
    done = 0
    kernel = hasattr(os, "copy_file_range")
    while done < length:
        n = min(CHUNK * 4, length - done)
        if kernel:
            try:
                got = os.copy_file_range(src_fd, dst_fd, n, start + done, out + done)
            except OSError as e:
                if e.errno not in _NO_KERNEL_COPY:
                    raise
                kernel = False
                continue
        else:
            if len(buf) < CHUNK:        # grown in place, once, so the caller keeps reusing it
                buf.extend(bytes(CHUNK - len(buf)))
            view = memoryview(buf)[:min(n, CHUNK)]
            got = os.preadv(src_fd, [view], start + done)
            _pwrite_all(dst_fd, view[:got], out + done)
        if got <= 0:
            raise ConversionError(f"the source ended early at byte {start + done}; was it changed meanwhile?")
        done += got


def _libc_sync_file_range() -> object | None:
    """sync_file_range(2) (Linux), which Python's os module does not expose; None elsewhere."""
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        fn = libc.sync_file_range
    except (OSError, AttributeError):
        return None
    fn.argtypes = (ctypes.c_int, ctypes.c_int64, ctypes.c_int64, ctypes.c_uint)
    fn.restype = ctypes.c_int
    return fn


_SYNC_FILE_RANGE = _libc_sync_file_range()
_SYNC_FILE_RANGE_WRITE = 2


def start_writeback(fd: int, offset: int, length: int) -> None:
    """Start writing a just-copied range to disk without waiting (SYNC_FILE_RANGE_WRITE), so the
    fsync at the end of the shard finds most pages already written instead of doing all the I/O then.
    Only a head start: durability still comes from that fsync."""
    if _SYNC_FILE_RANGE is not None and length > 0:
        _SYNC_FILE_RANGE(fd, offset, length, _SYNC_FILE_RANGE_WRITE)  # type: ignore[operator]


@dataclass
class Buffers:
    """The read-back buffers and the one thread that checks tensors while the next ones are copied."""

    a: bytearray
    b: bytearray
    pool: ThreadPoolExecutor

    def equal(self, n: int) -> bool:
        if n == CHUNK:
            return self.a == self.b                     # memcmp over the whole buffers
        va, vb = memoryview(self.a), memoryview(self.b)
        if n <= 1 << 20:
            return va[:n].tobytes() == vb[:n].tobytes()
        vb[n:] = va[n:]                                 # same tail, then one memcmp without allocating
        return self.a == self.b


def make_buffers(pool: ThreadPoolExecutor) -> Buffers:
    return Buffers(bytearray(CHUNK), bytearray(CHUNK), pool)


def write_shard(bufs: Buffers, src_path: str, dst_path: str, shard: OutShard) -> int:
    """Write one output shard, each tensor compared with the source while the next one is copied."""
    src_fd = os.open(src_path, os.O_RDONLY)
    checks: list[Future[None]] = []
    try:
        dst_fd = os.open(dst_path, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o644)
        try:
            _pwrite_all(dst_fd, memoryview(shard.header), 0)
            os.ftruncate(dst_fd, shard.size)        # unwritten runs stay holes (zeros)
            copy_buf = bytearray()                  # grows only if the kernel cannot copy
            for t, (out_begin, _) in zip(shard.tensors, shard.offsets):
                segs = segments(src_fd, t.begin, t.end)
                for off, n, data in segs:
                    if data:
                        _copy_range(src_fd, t.begin + off, n, dst_fd, out_begin + off, copy_buf)
                start_writeback(dst_fd, out_begin, t.nbytes)
                checks.append(bufs.pool.submit(_check_tensor, bufs, src_fd, dst_fd, t, out_begin, segs, shard.name))
            for f in checks:
                f.result()
            os.fsync(dst_fd)
        finally:
            for f in checks:
                f.cancel()
            wait(checks)                            # no check may outlive the descriptors it reads
            os.close(dst_fd)
    finally:
        os.close(src_fd)
    return len(shard.tensors)


def _zero_run(bufs: Buffers, fd: int, start: int, length: int) -> bool:
    """True when [start, start + length) reads as zeros: a hole, or data that is all zero."""
    for off, n, data in segments(fd, start, start + length):
        done = 0
        while data and done < n:
            k = min(CHUNK, n - done)
            got = os.preadv(fd, [memoryview(bufs.a)[:k]], start + off + done)
            if got != k or bufs.a[:k].count(0) != k:
                return False
            done += k
    return True


def _same_bytes(bufs: Buffers, src_fd: int, src_at: int, dst_fd: int, dst_at: int, length: int) -> bool:
    done = 0
    while done < length:
        k = min(CHUNK, length - done)
        got_a = os.preadv(src_fd, [memoryview(bufs.a)[:k]], src_at + done)
        got_b = os.preadv(dst_fd, [memoryview(bufs.b)[:k]], dst_at + done)
        if got_a != k or got_b != k or not bufs.equal(k):
            return False
        done += k
    return True


def _check_tensor(bufs: Buffers, src_fd: int, dst_fd: int, t: TensorAction, out_begin: int,
                  segs: list[Segment], shard_name: str) -> None:
    """Read the written tensor back and compare it with the source, byte for byte."""
    for off, n, data in segs:
        ok = (_same_bytes(bufs, src_fd, t.begin + off, dst_fd, out_begin + off, n) if data
              else _zero_run(bufs, dst_fd, out_begin + off, n))
        if not ok:
            raise ConversionError(f"{t.dst_name}: the bytes read back from {shard_name} differ from the source "
                                  f"({t.name} in {t.file}); the output was discarded")
