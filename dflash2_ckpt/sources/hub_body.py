"""Reading a Hub answer's body within a byte cap and the read's deadline.

httpx checks its timeout per read, so a server that sends one byte every few seconds never trips it;
and it inflates gzip without limit, so a 1 MB answer can become 1 GiB. Here the raw bytes are read
chunk by chunk, the clock is checked after each, and gzip / deflate are inflated with a bound on
what each step may produce, so neither the compressed nor the inflated size passes the cap.
"""

from __future__ import annotations

import time
import zlib
from collections.abc import Iterator
from typing import Any

# what the API calls are sent as Accept-Encoding: the encodings inflated here
ACCEPT = "gzip, deflate, identity"


class BodyTooLarge(Exception):
    def __init__(self, limit: int, inflated: bool) -> None:
        super().__init__(f"the answer is larger than {limit:,} bytes{' once inflated' if inflated else ''}")


class DeadlinePassed(Exception):
    def __init__(self, seconds: float, got: int) -> None:
        super().__init__(f"the answer was still arriving after {seconds:.0f} s ({got:,} bytes so far)")


class UnknownEncoding(Exception):
    pass


def _inflater(encoding: str) -> Any:
    enc = encoding.strip().lower()
    if enc in ("", "identity"):
        return None
    if enc in ("gzip", "x-gzip"):
        return zlib.decompressobj(16 + zlib.MAX_WBITS)
    if enc == "deflate":
        return zlib.decompressobj()
    raise UnknownEncoding(f"the answer is encoded as {encoding!r}, which was not asked for")


def deadline_chunks(chunks: Iterator[bytes], started: float, deadline: float) -> Iterator[bytes]:
    """The chunks, until the deadline (counted from `started`) has passed."""
    got = 0
    for chunk in chunks:
        got += len(chunk)
        yield chunk
        if time.monotonic() - started > deadline:
            raise DeadlinePassed(deadline, got)


def read_capped(response: Any, limit: int, started: float, deadline: float) -> bytes:
    """The whole (inflated) body of `response`; raises BodyTooLarge, DeadlinePassed, UnknownEncoding."""
    inflate = _inflater(response.headers.get("Content-Encoding", ""))
    out, raw = bytearray(), 0
    for chunk in deadline_chunks(response.iter_raw(), started, deadline):
        raw += len(chunk)
        if raw > limit:
            raise BodyTooLarge(limit, False)
        if inflate is None:
            out += chunk
        else:
            data = chunk
            while data:
                out += inflate.decompress(data, limit + 1 - len(out))
                if len(out) > limit:
                    raise BodyTooLarge(limit, True)
                data = inflate.unconsumed_tail
        if len(out) > limit:
            raise BodyTooLarge(limit, inflate is not None)
    if inflate is not None:
        out += inflate.flush()
        if len(out) > limit:
            raise BodyTooLarge(limit, True)
    return bytes(out)
