"""HTTP to the Hub through huggingface_hub's retrying helpers, with a bound on the total time.

`http_stream_backoff` retries 5xx, 408, timeouts and dropped connections with exponential backoff.
Three cases it leaves open are closed here, around it:
- 429: its wait is whatever Retry-After says (minutes, on the Hub), so 429 is taken out of its list
  and waited for here only while the wait fits the deadline; beyond that a RateLimitedError says how
  long the Hub asked for.
- A refused connection or failed DNS lookup: the machine is offline, and five retries over 24 s
  would only delay the answer, so it gets `connect_retries` quick retries, then one typed error.
- A body that ends early (a short Range response, a reset mid-body): the library has returned by
  then, so the missing bytes are asked for again here, under the same retry budget.
The library's retry warnings are kept off the terminal while this runs (the outcome is reported as
one typed error instead), unless HF_HUB_VERBOSITY or DFLASH2_CKPT_DEBUG asks for them.
"""

from __future__ import annotations

import json
import logging
import os
import time
import zlib
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from typing import Any

from ..errors import HubError
from .hub_body import ACCEPT, BodyTooLarge, DeadlinePassed, UnknownEncoding, deadline_chunks, read_capped
from .hub_errors import (
    Where,
    bad_answer,
    connection_errors,
    from_exception,
    offline_not_cached,
    status_error,
    unreachable,
)

_RETRY_STATUS = (408, 500, 502, 503, 504)  # 429 is handled here, with the deadline
MAX_API_BYTES = 64 * 1024 * 1024  # an API answer (model info), compressed or inflated: local configs' cap
MAX_JSON_DEPTH = 512  # nesting of an API answer; model info is a few levels deep


@dataclass(frozen=True)
class RetryPolicy:
    max_retries: int = 4  # per request, for 5xx / 408 / timeouts / resets / short bodies / 429
    base_wait: float = 0.5  # s before the first retry, doubled each time ...
    max_wait: float = 4.0  # ... up to this
    connect_retries: int = 1  # refused / no DNS: offline is almost certain
    timeout: float = 10.0  # s per connect and per read
    deadline: float = 60.0  # s for one read, waits included (a long Retry-After is not waited for)

    @classmethod
    def from_env(cls) -> RetryPolicy:
        """DFLASH2_CKPT_HUB_RETRIES / _BACKOFF / _TIMEOUT / _DEADLINE override the defaults (tests, slow links)."""

        def num(name: str, default: float) -> float:
            raw = os.environ.get(f"DFLASH2_CKPT_HUB_{name}")
            try:
                return float(raw) if raw not in (None, "") else default
            except ValueError:
                return default

        d = cls()
        base = num("BACKOFF", d.base_wait)
        return cls(
            max_retries=int(num("RETRIES", d.max_retries)),
            base_wait=base,
            max_wait=base * 8,
            connect_retries=d.connect_retries,
            timeout=num("TIMEOUT", d.timeout),
            deadline=num("DEADLINE", d.deadline),
        )

    def wait(self, attempt: int) -> float:
        return float(min(self.max_wait, self.base_wait * 2 ** max(0, attempt - 1)))


@contextmanager
def quiet_hub_logs() -> Iterator[None]:
    """Keep huggingface_hub's per-retry warnings off stderr while a request runs."""
    logger = logging.getLogger("huggingface_hub")
    if (
        os.environ.get("HF_HUB_VERBOSITY")
        or os.environ.get("DFLASH2_CKPT_DEBUG")
        or logger.level > logging.WARNING
    ):
        yield
        return
    before = logger.level
    logger.setLevel(logging.ERROR)
    try:
        yield
    finally:
        logger.setLevel(before)


def _retry_after(headers: Any) -> float | None:
    from huggingface_hub.utils import parse_ratelimit_headers  # type: ignore[attr-defined]  # lazily re-exported

    info = parse_ratelimit_headers(headers)
    if info is not None and info.remaining == 0:
        return float(info.reset_in_seconds)
    raw = (headers.get("Retry-After") or "").strip()
    return float(raw) if raw.isdigit() else None


class HubTransport:
    """GETs for one repo under one RetryPolicy; every failure comes out as a typed HubError."""

    def __init__(self, where: Where, token: str | None, policy: RetryPolicy | None = None) -> None:
        self.where = where
        self.token = token
        self.policy = policy or RetryPolicy.from_env()
        self.attempts = 0  # requests sent, retries included (for reports and tests)

    def _headers(self, extra: dict[str, str] | None = None) -> dict[str, str]:
        from huggingface_hub.utils import build_hf_headers  # type: ignore[attr-defined]  # lazily re-exported

        h = dict(build_hf_headers(token=self.token))
        h.update(extra or {})
        return h

    @contextmanager
    def open(
        self,
        url: str,
        *,
        headers: dict[str, str] | None = None,
        params: dict[str, Any] | None = None,
        started: float | None = None,
    ) -> Iterator[Any]:
        """One GET whose response (status < 400) is streamed; retries as described in the module doc."""
        import httpx2  # heavy: httpx2 loads only when this runs
        from huggingface_hub.utils import http_stream_backoff  # type: ignore[attr-defined]  # lazily re-exported

        p, w = self.policy, self.where
        started = time.monotonic() if started is None else started
        connect_fails = limited = 0
        while True:
            stack = ExitStack()
            try:
                with quiet_hub_logs():
                    r = stack.enter_context(
                        http_stream_backoff(
                            "GET",
                            url,
                            headers=self._headers(headers),
                            params=params,
                            timeout=p.timeout,
                            max_retries=p.max_retries,
                            base_wait_time=p.base_wait,
                            max_wait_time=p.max_wait,
                            retry_on_exceptions=(
                                httpx2.TimeoutException,
                                httpx2.ReadError,
                                httpx2.WriteError,
                                httpx2.CloseError,
                                httpx2.RemoteProtocolError,
                            ),
                            retry_on_status_codes=_RETRY_STATUS,
                        )
                    )
            except httpx2.ConnectError as e:
                self.attempts += 1
                connect_fails += 1
                if connect_fails > p.connect_retries or time.monotonic() - started > p.deadline:
                    raise unreachable(w, e, self.attempts) from None
                time.sleep(p.wait(connect_fails))
                continue
            except Exception as e:  # noqa: BLE001 - retries ran out inside the library: one typed error
                raise _mapped(e, w, p.max_retries + 1) from None
            self.attempts += 1
            if r.status_code < 400:
                break
            with stack:
                r.read()
                if r.status_code != 429:
                    _raise_for_status(r, w)
                limited += 1
                after = _retry_after(r.headers)
                wait = p.wait(limited) if after is None else after
                if limited > p.max_retries or time.monotonic() - started + wait > p.deadline:
                    raise status_error(w, 429, attempts=limited, retry_after=after)
            time.sleep(wait)
        with stack:
            yield r

    def get_json(self, url: str, params: dict[str, Any] | None = None) -> Any:
        """The JSON answer, read within MAX_API_BYTES (compressed and inflated) and the deadline."""
        import httpx2  # heavy: httpx2 loads only when this runs

        p, started, broken = self.policy, time.monotonic(), 0
        while True:
            with self.open(url, params=params, started=started, headers={"Accept-Encoding": ACCEPT}) as r:
                try:
                    body = read_capped(r, MAX_API_BYTES, started, p.deadline)
                except (httpx2.TransportError, OSError) as e:  # broke off mid-body: ask again
                    body, why = None, e
                except DeadlinePassed as e:
                    raise unreachable(self.where, str(e), self.attempts) from None
                except (BodyTooLarge, UnknownEncoding, zlib.error) as e:
                    raise bad_answer(self.where, str(e)) from None
            if body is not None:
                break
            broken += 1
            if broken > p.max_retries or time.monotonic() - started > p.deadline:
                raise unreachable(self.where, why, broken) from None
            time.sleep(p.wait(broken))
        try:
            doc = json.loads(body)
        except RecursionError:
            raise bad_answer(self.where, f"the answer nests deeper than {MAX_JSON_DEPTH} levels") from None
        except ValueError as e:
            raise status_error(self.where, r.status_code, f"the answer is not JSON ({e})") from None
        if _depth(doc) > MAX_JSON_DEPTH:
            raise bad_answer(self.where, f"the answer nests deeper than {MAX_JSON_DEPTH} levels")
        return doc

    def get_range(self, url: str, start: int, length: int, counter: list[int] | None = None) -> bytes:
        """`length` bytes at `start`: ranged GETs until they are all here (a short answer is continued).

        A server that ignores Range is cut off once the bytes are in, never drained. `counter[0]`
        accumulates the body bytes received.
        """
        import httpx2  # heavy: httpx2 loads only when this runs

        p, out = self.policy, bytearray()
        started, short = time.monotonic(), 0
        while len(out) < length:
            pos = start + len(out)
            rng = {"Range": f"bytes={pos}-{start + length - 1}", "Accept-Encoding": "identity"}
            before, broke = len(out), None
            with self.open(url, headers=rng, started=started) as r:
                skip = pos if r.status_code == 200 else 0
                try:
                    for chunk in deadline_chunks(r.iter_bytes(), started, p.deadline):
                        if counter is not None:
                            counter[0] += len(chunk)
                        if skip:
                            cut = min(skip, len(chunk))
                            chunk, skip = chunk[cut:], skip - cut
                        out += chunk
                        if len(out) >= length:
                            break
                except DeadlinePassed as e:
                    raise unreachable(
                        self.where, f"reading {length:,} bytes at {start:,}: {e}", self.attempts
                    ) from None
                except (httpx2.TransportError, OSError) as e:
                    # the body broke off: caught here, inside the response, so that the library's
                    # retry generator is closed normally rather than handed the error mid-stream
                    broke = e
            why = (
                f"{type(broke).__name__}: {broke}"
                if broke is not None
                else f"the Hub sent {len(out) - before} of {length - before} bytes asked for"
            )
            if len(out) >= length:
                break
            short += 1
            if short > p.max_retries or time.monotonic() - started > p.deadline:
                raise unreachable(
                    self.where, f"short read at byte {start + len(out)}: {why}", short
                ) from None
            time.sleep(p.wait(short))
        return bytes(out[:length])


def _depth(doc: Any) -> int:
    """Nesting depth of a parsed JSON document, without recursion."""
    deepest, stack = 0, [(doc, 1)]
    while stack:
        node, d = stack.pop()
        deepest = max(deepest, d)
        if d > MAX_JSON_DEPTH:
            break
        if isinstance(node, dict):
            stack.extend((v, d + 1) for v in node.values())
        elif isinstance(node, list):
            stack.extend((v, d + 1) for v in node)
    return deepest


def _raise_for_status(r: Any, w: Where) -> None:
    from huggingface_hub.utils import hf_raise_for_status  # type: ignore[attr-defined]  # lazily re-exported

    try:
        hf_raise_for_status(r)
    except Exception as e:  # noqa: BLE001
        raise from_exception(e, w) from None
    raise status_error(w, r.status_code)


def _mapped(e: BaseException, w: Where, attempts: int) -> HubError:
    from huggingface_hub import errors as he  # heavy: huggingface_hub loads only when this runs

    if isinstance(e, he.OfflineModeIsEnabled):
        return offline_not_cached(w, [])
    if isinstance(e, he.HfHubHTTPError) and getattr(e, "response", None) is not None:
        status = e.response.status_code
        if status in _RETRY_STATUS:
            return status_error(w, status, attempts=attempts)
    if isinstance(e, connection_errors()):
        return unreachable(w, e, attempts)
    err = from_exception(e, w)
    if isinstance(err, HubError):
        return err
    return HubError(err.message, repo_id=w.repo_id, revision=w.revision, path=w.path, hint=err.hint)
