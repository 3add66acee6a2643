"""The token bucket behind --rate, on a simulated clock."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from dflash2_ckpt.audit.ratelimit import RateLimiter


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        assert seconds > 0
        self.now += seconds


@given(rate=st.floats(0.5, 500), burst=st.integers(1, 16), n=st.integers(1, 200))
def test_n_requests_take_at_least_the_time_the_rate_allows(rate: float, burst: int, n: int) -> None:
    clock = Clock()
    limiter = RateLimiter(rate, burst, clock=clock, sleep=clock.sleep)
    for _ in range(n):
        limiter.acquire()
    assert limiter.requests == n
    # the first `burst` go at once; every later one waits for its token
    expected = max(0, n - burst) / rate
    assert clock.now >= expected - 1e-6
    assert clock.now <= expected + 1.0 / rate + 1e-6


def test_an_idle_bucket_refills_only_up_to_its_burst() -> None:
    clock = Clock()
    limiter = RateLimiter(10, 2, clock=clock, sleep=clock.sleep)
    clock.now = 100.0  # long idle
    for _ in range(4):
        limiter.acquire()
    assert abs(clock.now - (100.0 + 0.2)) < 1e-9  # two free, then two at 10/s
