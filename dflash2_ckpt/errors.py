"""Typed errors. The library raises these; only the CLI turns them into one line and an exit code.

Every error carries what it is about as attributes (path, repo_id, revision, field, tensor), so a caller
decides on the type and the attributes, never on the message text. `attributes()` lists the ones set.
"""

from __future__ import annotations

from typing import Any


class Dflash2Error(Exception):
    """Base of every error the toolkit raises on purpose."""

    hint: str = ""

    def __init__(
        self,
        message: str,
        *,
        path: str | None = None,
        hint: str | None = None,
        repo_id: str | None = None,
        revision: str | None = None,
        field: str | None = None,
        tensor: str | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.path = path
        self.repo_id = repo_id
        self.revision = revision
        self.field = field
        self.tensor = tensor
        if hint is not None:
            self.hint = hint

    def __str__(self) -> str:
        where = f"{self.path}: " if self.path else ""
        return f"{where}{self.message}"

    def attributes(self) -> dict[str, Any]:
        """The set attributes that locate the error (what a JSON error document carries besides the message)."""
        keys = ("path", "repo_id", "revision", "field", "tensor", *self.extra_attributes)
        return {k: getattr(self, k) for k in keys if getattr(self, k, None) is not None}

    extra_attributes: tuple[str, ...] = ()


class UsageError(Dflash2Error):
    """The caller asked for something that cannot be done as asked (a missing or conflicting argument)."""


class UnsafeOutputError(UsageError):
    """A report file would be written through a symbolic link, over a directory, or over a file of the
    checkpoint being read."""


class SourceError(Dflash2Error):
    """The checkpoint could not be read at all (missing path, permission, network)."""


class HeaderError(Dflash2Error):
    """A safetensors header or index is malformed or lies about the data."""

    extra_attributes = ("offset",)

    def __init__(
        self,
        message: str,
        *,
        path: str | None = None,
        offset: int | None = None,
        tensor: str | None = None,
        hint: str | None = None,
    ) -> None:
        super().__init__(message, path=path, hint=hint, tensor=tensor)
        self.offset = offset


class ConfigError(Dflash2Error):
    """config.json is unreadable or does not describe a DFlash drafter."""


class VersionMismatchError(Dflash2Error):
    """A loader guard refused a checkpoint of the other DFlash version (e.g. v2 handed to a v1 loader)."""

    extra_attributes = ("expected", "found", "dropped_bytes")

    def __init__(
        self,
        message: str,
        *,
        expected: str,
        found: str,
        dropped_bytes: int = 0,
        path: str | None = None,
        hint: str | None = None,
    ) -> None:
        super().__init__(message, path=path, hint=hint)
        self.expected = expected
        self.found = found
        self.dropped_bytes = dropped_bytes


class ConversionError(Dflash2Error):
    """A conversion cannot be exact and was refused, or its output failed verification."""


class ConversionUsageError(ConversionError, UsageError):
    """A conversion asked for the impossible: no verifier name, DST exists without force, DST inside SRC."""


class MeaningChangedError(ConversionError):
    """A conversion would change what an engine computes (engines/meaning.py); nothing was written.
    `meaning`: the per-engine comparison, as JSON."""

    extra_attributes = ("meaning",)

    def __init__(
        self, message: str, *, meaning: dict[str, Any], path: str | None = None, hint: str | None = None
    ) -> None:
        super().__init__(message, path=path, hint=hint)
        self.meaning = meaning


class SourceFindingsError(ConversionError):
    """The source has error findings the caller did not accept; nothing was converted."""

    extra_attributes = ("findings",)

    def __init__(
        self,
        message: str,
        *,
        findings: list[dict[str, Any]],
        path: str | None = None,
        hint: str | None = None,
    ) -> None:
        super().__init__(message, path=path, hint=hint)
        self.findings = findings


class BudgetError(Dflash2Error):
    """A run would need more memory than its budget allows (the smoke's --max-memory); nothing was loaded."""


class MissingDependencyError(Dflash2Error):
    """An optional extra (e.g. `[smoke]`) is needed for this command."""


class EngineError(Dflash2Error):
    """A serving engine (llama-server) could not be started, refused the model, or stopped answering.
    `log_tail` holds the engine's own last log lines, which name the cause ("wrong number of tensors")."""

    extra_attributes = ("engine", "log_tail")

    def __init__(
        self,
        message: str,
        *,
        engine: str,
        log_tail: list[str] | None = None,
        path: str | None = None,
        hint: str | None = None,
    ) -> None:
        super().__init__(message, path=path, hint=hint)
        self.engine = engine
        self.log_tail = list(log_tail or [])


class UnsafePathError(SourceError):
    """A file name is absolute, climbs out of the checkpoint, or is a link that leaves it."""


class AmbiguousSubfolderError(SourceError):
    """The root is not a drafter and several subfolders are: the user has to name one."""

    def __init__(
        self, message: str, *, candidates: list[str], path: str | None = None, hint: str | None = None
    ) -> None:
        super().__init__(message, path=path, hint=hint)
        self.candidates = candidates


class HubError(SourceError):
    """A Hugging Face Hub repo could not be read (or written). `repo_id` / `revision` say which."""

    def __init__(
        self,
        message: str,
        *,
        repo_id: str,
        revision: str | None = None,
        path: str | None = None,
        hint: str | None = None,
    ) -> None:
        super().__init__(message, path=path or repo_id, hint=hint)
        self.repo_id = repo_id
        self.revision = revision


class RepositoryNotFoundError(HubError):
    """No such repo, or a private one this token cannot see (the Hub does not say which)."""


class RevisionNotFoundError(HubError):
    """The repo exists; the branch, tag or commit does not."""


class AmbiguousRevisionError(RevisionNotFoundError):
    """An abbreviated commit hash that several cached commits start with: `candidates` lists them."""

    def __init__(
        self,
        message: str,
        *,
        repo_id: str,
        revision: str | None = None,
        candidates: list[str],
        path: str | None = None,
        hint: str | None = None,
    ) -> None:
        super().__init__(message, repo_id=repo_id, revision=revision, path=path, hint=hint)
        self.candidates = candidates


class EntryNotFoundError(HubError):
    """A file the listing named is not at that commit."""

    def __init__(
        self,
        message: str,
        *,
        repo_id: str,
        revision: str | None = None,
        filename: str = "",
        path: str | None = None,
        hint: str | None = None,
    ) -> None:
        super().__init__(message, repo_id=repo_id, revision=revision, path=path, hint=hint)
        self.filename = filename


class HubAccessError(HubError):
    """The Hub refused this token: unauthorised (401), forbidden (403) or a gated repo not granted."""


class GatedRepoError(HubAccessError):
    """A gated repo whose conditions this token's account has not accepted (or been granted)."""


class OfflineNotCachedError(HubError):
    """Offline (HF_HUB_OFFLINE, or the Hub unreachable) and the files needed are not in the local cache."""

    def __init__(
        self,
        message: str,
        *,
        repo_id: str,
        revision: str | None = None,
        missing: list[str] | None = None,
        path: str | None = None,
        hint: str | None = None,
    ) -> None:
        super().__init__(message, repo_id=repo_id, revision=revision, path=path, hint=hint)
        self.missing = missing or []


class HubUnreachableError(HubError):
    """No connection to the Hub (DNS, refused, reset, timeout) after the bounded retries."""

    def __init__(
        self,
        message: str,
        *,
        repo_id: str,
        revision: str | None = None,
        endpoint: str = "",
        attempts: int = 0,
        path: str | None = None,
        hint: str | None = None,
    ) -> None:
        super().__init__(message, repo_id=repo_id, revision=revision, path=path, hint=hint)
        self.endpoint = endpoint
        self.attempts = attempts


class HubStatusError(HubError):
    """The Hub kept answering an error status (5xx, or another unexpected one) after the bounded retries."""

    def __init__(
        self,
        message: str,
        *,
        repo_id: str,
        revision: str | None = None,
        status: int | None = None,
        attempts: int = 0,
        path: str | None = None,
        hint: str | None = None,
    ) -> None:
        super().__init__(message, repo_id=repo_id, revision=revision, path=path, hint=hint)
        self.status = status
        self.attempts = attempts


class HubResponseError(HubError):
    """The Hub (or what answers as it) sent something unusable: too large, too deep, a file size that
    is not a size. The repo's files were never read, so nothing is said about the checkpoint."""


class RateLimitedError(HubStatusError):
    """HTTP 429 beyond what the retry budget allows; `retry_after` is the server's wait in seconds, if given."""

    def __init__(
        self,
        message: str,
        *,
        repo_id: str,
        revision: str | None = None,
        retry_after: float | None = None,
        attempts: int = 0,
        path: str | None = None,
        hint: str | None = None,
    ) -> None:
        super().__init__(
            message, repo_id=repo_id, revision=revision, status=429, attempts=attempts, path=path, hint=hint
        )
        self.retry_after = retry_after
