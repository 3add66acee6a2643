"""A bounded request rate to the Hub, applied to every HTTP request huggingface_hub makes.

The limit sits in the HTTP client (a request event hook on the client huggingface_hub builds from its
client factory), so retries, redirects and metadata calls all count, whatever code path makes them.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any


class RateLimiter:
    """Token bucket: at most `rate` requests per second on average, bursts of at most `burst`."""

    def __init__(
        self,
        rate: float,
        burst: int | None = None,
        *,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        if rate <= 0:
            raise ValueError("rate must be positive")
        self.rate = rate
        self.burst = float(burst if burst is not None else max(1, int(rate)))
        self._clock, self._sleep = clock, sleep
        self._tokens = self.burst
        self._last = clock()
        self._lock = threading.Lock()
        self.requests = 0

    def acquire(self) -> None:
        while True:
            with self._lock:
                now = self._clock()
                self._tokens = min(self.burst, self._tokens + (now - self._last) * self.rate)
                self._last = now
                if self._tokens >= 1 - 1e-9:  # float slack: a refill of exactly one token may round below
                    self._tokens = max(0.0, self._tokens - 1)
                    self.requests += 1
                    return
                wait = (1 - self._tokens) / self.rate
            self._sleep(wait)


@contextmanager
def hub_rate_limit(limiter: RateLimiter | None) -> Iterator[None]:
    """Install `limiter` on huggingface_hub's shared HTTP client for the duration of the block."""
    if limiter is None:
        yield
        return
    from huggingface_hub.utils import _http  # heavy: huggingface_hub loads only when this runs

    def factory() -> Any:
        client = _http.default_client_factory()
        client.event_hooks["request"] = [*client.event_hooks["request"], lambda request: limiter.acquire()]
        return client

    _http.set_client_factory(factory)
    try:
        yield
    finally:
        _http.set_client_factory(_http.default_client_factory)
