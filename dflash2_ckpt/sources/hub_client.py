"""huggingface_hub's own calls (tree listing, file download, preupload, commit, repo creation) under the same
timeout and retry budget as this package's reads (hub_transport.RetryPolicy, DFLASH2_CKPT_HUB_TIMEOUT /
_DEADLINE).

huggingface_hub sends them through one shared httpx client built with `timeout=None`, and several calls
pass `timeout=None` on (list_repo_tree, the preupload and commit POSTs): a Hub that accepts the connection
and never answers hangs them for ever, and the library's own retries multiply whatever timeout there is.
Inside `bounded_hub_calls`, the client's transport
- caps every request's connect / read / write / pool timeout at the policy's `timeout`, whatever the caller
  asked (a stalled endpoint times out after that many seconds of silence, a long upload that keeps
  moving never does), and
- refuses to start a request once `deadline` seconds have passed without any answer from the Hub (the
  library's retries of a stalled endpoint end there), raising one HubUnreachableError that names the
  endpoint.
The library's default client comes back when the block ends.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from .hub_errors import Where, unreachable
from .hub_transport import RetryPolicy


class _Clock:
    """Seconds since the first request that is still waiting for any answer (0 when none is)."""

    def __init__(self) -> None:
        self.waiting_since: float | None = None
        self.lock = threading.Lock()

    def asking(self) -> float:
        with self.lock:
            now = time.monotonic()
            if self.waiting_since is None:
                self.waiting_since = now
            return now - self.waiting_since

    def answered(self) -> None:
        with self.lock:
            self.waiting_since = None


def _transport(policy: RetryPolicy, where: Where, clock: _Clock) -> Any:
    import httpx2  # heavy: httpx2 loads only when this runs

    class BoundedTransport(httpx2.HTTPTransport):
        def handle_request(self, request: httpx2.Request) -> httpx2.Response:
            quiet = clock.asking()
            if quiet > policy.deadline:
                raise unreachable(
                    where,
                    f"no answer from the Hub for {quiet:.0f} s (last: {request.method} "
                    f"{request.url.path}); DFLASH2_CKPT_HUB_DEADLINE is "
                    f"{policy.deadline:g} s",
                )
            asked = request.extensions.get("timeout") or {}
            request.extensions["timeout"] = {
                k: min(v, policy.timeout) if v is not None else policy.timeout
                for k, v in {"connect": None, "read": None, "write": None, "pool": None, **asked}.items()
            }
            response = super().handle_request(request)
            clock.answered()
            return response

    return BoundedTransport()


@contextmanager
def bounded_hub_calls(where: Where, policy: RetryPolicy | None = None) -> Iterator[None]:
    """huggingface_hub calls made inside run under `policy` (module doc)."""
    import httpx2  # heavy: httpx2 loads only when this runs
    from huggingface_hub.utils import _http  # heavy: huggingface_hub loads only when this runs

    p = policy or RetryPolicy.from_env()
    clock = _Clock()
    before = _http._GLOBAL_CLIENT_FACTORY

    def factory() -> httpx2.Client:
        return httpx2.Client(
            event_hooks={"request": [_http.hf_request_event_hook]},
            follow_redirects=True,
            timeout=p.timeout,
            transport=_transport(p, where, clock),
        )

    _http.set_client_factory(factory)
    try:
        yield
    finally:
        _http.set_client_factory(before)
