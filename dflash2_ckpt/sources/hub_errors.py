"""One typed error, with the next step, for every way a Hub request can fail.

Callers tell failures apart by type (dflash2_ckpt.errors: RepositoryNotFoundError, GatedRepoError,
OfflineNotCachedError, HubUnreachableError, ...) and read repo_id / revision from attributes, never
from the message text.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import (
    AmbiguousRevisionError,
    EntryNotFoundError,
    GatedRepoError,
    HubAccessError,
    HubError,
    HubResponseError,
    HubStatusError,
    HubUnreachableError,
    OfflineNotCachedError,
    RateLimitedError,
    RepositoryNotFoundError,
    RevisionNotFoundError,
    SourceError,
)


@dataclass(frozen=True)
class Where:
    """The repo a request was about, for messages and error attributes."""

    repo_id: str
    revision: str | None = None
    endpoint: str = ""
    label: str = ""  # what the user typed

    @property
    def path(self) -> str:
        return self.label or self.repo_id


def connection_errors() -> tuple[type[BaseException], ...]:
    """The HTTP client's transport errors (httpx2 / httpx, whichever huggingface_hub brought)."""
    out: list[type[BaseException]] = [ConnectionError, TimeoutError]
    for mod in ("httpx2", "httpx"):
        try:
            out.append(__import__(mod).TransportError)
        except (ImportError, AttributeError):
            pass
    return tuple(out)


def bad_answer(w: Where, why: str) -> HubResponseError:
    return HubResponseError(
        f"unusable answer from {w.endpoint or 'the Hub'}: {why}",
        repo_id=w.repo_id,
        revision=w.revision,
        path=w.path,
        hint="check HF_ENDPOINT points at the Hub (or a mirror you trust); retry later",
    )


def unreachable(w: Where, cause: BaseException | str, attempts: int = 0) -> HubUnreachableError:
    why = (
        cause if isinstance(cause, str) else (f"{type(cause).__name__}: {cause}".rstrip(": ")).splitlines()[0]
    )
    tries = f" after {attempts} attempt(s)" if attempts > 1 else ""
    return HubUnreachableError(
        f"cannot reach {w.endpoint or 'the Hub'}{tries} ({why})",
        repo_id=w.repo_id,
        revision=w.revision,
        endpoint=w.endpoint,
        attempts=attempts,
        path=w.path,
        hint="check your connection or proxy (HF_ENDPOINT); with the files cached, set HF_HUB_OFFLINE=1",
    )


def status_error(
    w: Where, status: int | None, detail: str = "", attempts: int = 0, retry_after: float | None = None
) -> HubError:
    """An HTTP status the Hub kept answering (or that is not worth retrying)."""
    tries = f" after {attempts} attempt(s)" if attempts > 1 else ""
    detail = f": {detail}" if detail else ""
    if status == 401:
        return HubAccessError(
            f"unauthorised: the Hub rejected the token{detail}",
            repo_id=w.repo_id,
            revision=w.revision,
            path=w.path,
            hint="check --token / HF_TOKEN (a fine-grained token needs read access to this repo)",
        )
    if status == 403:
        return HubAccessError(
            f"forbidden: this token may not access {w.repo_id}{detail}",
            repo_id=w.repo_id,
            revision=w.revision,
            path=w.path,
            hint="use a token with access to the repo",
        )
    if status == 429:
        wait = f"; it asks to wait {retry_after:.0f} s" if retry_after else ""
        return RateLimitedError(
            f"the Hub is rate-limiting these requests{tries}{wait}",
            repo_id=w.repo_id,
            revision=w.revision,
            retry_after=retry_after,
            attempts=attempts,
            path=w.path,
            hint="retry later; requests with a token (--token / HF_TOKEN) get a higher limit",
        )
    return HubStatusError(
        f"the Hub answered HTTP {status}{tries}{detail}",
        repo_id=w.repo_id,
        revision=w.revision,
        status=status,
        attempts=attempts,
        path=w.path,
        hint="retry later; if it persists, check https://status.huggingface.co",
    )


def offline_not_cached(
    w: Where,
    missing: list[str],
    *,
    reason: str = "offline mode (HF_HUB_OFFLINE) is on",
    hint: str | None = None,
) -> OfflineNotCachedError:
    what = ", ".join(missing[:3]) + (f" and {len(missing) - 3} more" if len(missing) > 3 else "")
    rev = f"@{w.revision}" if w.revision and w.revision != "main" else ""
    return OfflineNotCachedError(
        f"{reason} and {w.repo_id}{rev} is not in the local cache ({what or 'nothing cached'})",
        repo_id=w.repo_id,
        revision=w.revision,
        missing=missing,
        path=w.path,
        hint=hint or f"unset HF_HUB_OFFLINE, or fetch it once: {download_command(w, missing)}",
    )


def ambiguous_commit(w: Where, candidates: list[str]) -> AmbiguousRevisionError:
    listed = ", ".join(candidates[:8]) + (f" and {len(candidates) - 8} more" if len(candidates) > 8 else "")
    return AmbiguousRevisionError(
        f"{w.repo_id}@{w.revision} is ambiguous: {len(candidates)} cached commits start with {w.revision} "
        f"({listed})",
        repo_id=w.repo_id,
        revision=w.revision,
        candidates=candidates,
        path=w.path,
        hint=f"give more of the commit hash, e.g. {w.repo_id}@{candidates[0][:12]}",
    )


def download_command(w: Where, files: list[str]) -> str:
    """The `hf download` line that fetches exactly what is needed (config.json only, for a --target)."""
    rev = f" --revision {w.revision}" if w.revision and w.revision != "main" else ""
    if files and all(f.endswith("config.json") for f in files):
        return f"hf download {w.repo_id} {' '.join(files)}{rev}"
    return f"hf download {w.repo_id}{rev} --include '*.json' '*.safetensors'"


def from_exception(e: BaseException, w: Where) -> SourceError:
    """Map a huggingface_hub / HTTP client exception onto the typed errors."""
    from huggingface_hub import errors as he  # heavy: huggingface_hub loads only when this runs

    if isinstance(e, SourceError):
        return e
    if isinstance(e, he.GatedRepoError):
        return GatedRepoError(
            "the repo is gated and this token has not been granted access",
            repo_id=w.repo_id,
            revision=w.revision,
            path=w.path,
            hint=f"accept the conditions at {w.endpoint}/{w.repo_id}, then pass --token or set HF_TOKEN",
        )
    if isinstance(e, he.RevisionNotFoundError):
        return RevisionNotFoundError(
            f"revision {w.revision or 'main'!r} not found in {w.repo_id}",
            repo_id=w.repo_id,
            revision=w.revision,
            path=w.path,
            hint="give an existing branch, tag or commit sha with --revision (or @rev)",
        )
    if isinstance(e, he.RepositoryNotFoundError):
        return RepositoryNotFoundError(
            f"repo {w.repo_id} not found (or private, and this token cannot see it)",
            repo_id=w.repo_id,
            revision=w.revision,
            path=w.path,
            hint="check the spelling; for a private repo pass --token or set HF_TOKEN",
        )
    if isinstance(e, he.RemoteEntryNotFoundError):
        return EntryNotFoundError(
            f"file not found in the repo: {e}".splitlines()[0],
            repo_id=w.repo_id,
            revision=w.revision,
            path=w.path,
        )
    if isinstance(e, he.OfflineModeIsEnabled):
        return offline_not_cached(w, [])
    if isinstance(e, he.HfHubHTTPError):
        resp = getattr(e, "response", None)
        status = resp.status_code if resp is not None else None
        return status_error(
            w, status, str(e).strip().splitlines()[0] if status not in (401, 403, 429) else ""
        )
    if isinstance(e, he.LocalEntryNotFoundError):
        return unreachable(w, "and the file is not in the local cache")
    if isinstance(e, connection_errors()):
        return unreachable(w, e)
    if isinstance(e, ValueError):
        return HubError(f"invalid Hub request: {e}", repo_id=w.repo_id, revision=w.revision, path=w.path)
    return HubError(
        f"Hub access failed: {type(e).__name__}: {e}", repo_id=w.repo_id, revision=w.revision, path=w.path
    )
