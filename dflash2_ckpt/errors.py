"""Typed errors. The library raises these; only the CLI turns them into one line and an exit code.

Every error carries what it is about as attributes (path, repo_id, revision, field, tensor), so a caller
decides on the type and the attributes, never on the message text. `attributes()` lists the ones set.
"""
from __future__ import annotations

from typing import Any


class Dflash2Error(Exception):
    """Base of every error the toolkit raises on purpose."""

    hint: str = ""

    def __init__(self, message: str, *, path: str | None = None, hint: str | None = None,
                 repo_id: str | None = None, revision: str | None = None, field: str | None = None,
                 tensor: str | None = None) -> None:
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


class SourceError(Dflash2Error):
    """The checkpoint could not be read at all (missing path, permission, network)."""


class HeaderError(Dflash2Error):
    """A safetensors header or index is malformed or lies about the data."""

    extra_attributes = ("offset",)

    def __init__(self, message: str, *, path: str | None = None, offset: int | None = None,
                 tensor: str | None = None, hint: str | None = None) -> None:
        super().__init__(message, path=path, hint=hint, tensor=tensor)
        self.offset = offset


class ConfigError(Dflash2Error):
    """config.json is unreadable or does not describe a DFlash drafter."""


class VersionMismatchError(Dflash2Error):
    """A loader guard refused a checkpoint of the other DFlash version (e.g. v2 handed to a v1 loader)."""

    extra_attributes = ("expected", "found", "dropped_bytes")

    def __init__(self, message: str, *, expected: str, found: str, dropped_bytes: int = 0,
                 path: str | None = None, hint: str | None = None) -> None:
        super().__init__(message, path=path, hint=hint)
        self.expected = expected
        self.found = found
        self.dropped_bytes = dropped_bytes


class ConversionError(Dflash2Error):
    """A conversion cannot be exact and was refused, or its output failed verification."""


class ConversionUsageError(ConversionError, UsageError):
    """A conversion asked for the impossible: no verifier name, DST exists without force, DST inside SRC."""


class SourceFindingsError(ConversionError):
    """The source has error findings the caller did not accept; nothing was converted."""

    extra_attributes = ("findings",)

    def __init__(self, message: str, *, findings: list[dict[str, Any]], path: str | None = None,
                 hint: str | None = None) -> None:
        super().__init__(message, path=path, hint=hint)
        self.findings = findings


class MissingDependencyError(Dflash2Error):
    """An optional extra (e.g. `[smoke]`) is needed for this command."""
