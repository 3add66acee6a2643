"""Typed errors. The library raises these; only the CLI turns them into one line and an exit code."""
from __future__ import annotations


class Dflash2Error(Exception):
    """Base of every error the toolkit raises on purpose."""

    hint: str = ""

    def __init__(self, message: str, *, path: str | None = None, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.path = path
        if hint is not None:
            self.hint = hint

    def __str__(self) -> str:
        where = f"{self.path}: " if self.path else ""
        return f"{where}{self.message}"


class SourceError(Dflash2Error):
    """The checkpoint could not be read at all (missing path, permission, network)."""


class HeaderError(Dflash2Error):
    """A safetensors header or index is malformed or lies about the data."""

    def __init__(self, message: str, *, path: str | None = None, offset: int | None = None,
                 tensor: str | None = None, hint: str | None = None) -> None:
        super().__init__(message, path=path, hint=hint)
        self.offset = offset
        self.tensor = tensor


class ConfigError(Dflash2Error):
    """config.json is unreadable or does not describe a DFlash drafter."""

    def __init__(self, message: str, *, path: str | None = None, field: str | None = None,
                 hint: str | None = None) -> None:
        super().__init__(message, path=path, hint=hint)
        self.field = field


class VersionMismatchError(Dflash2Error):
    """A loader guard refused a checkpoint of the other DFlash version (e.g. v2 handed to a v1 loader)."""

    def __init__(self, message: str, *, expected: str, found: str, dropped_bytes: int = 0,
                 path: str | None = None, hint: str | None = None) -> None:
        super().__init__(message, path=path, hint=hint)
        self.expected = expected
        self.found = found
        self.dropped_bytes = dropped_bytes


class ConversionError(Dflash2Error):
    """A conversion cannot be exact and was refused, or its output failed verification."""


class UsageError(Dflash2Error):
    """The inputs do not say enough to run (e.g. no verifier architectures for a flat output); exit 2."""


class MissingDependencyError(Dflash2Error):
    """An optional extra (e.g. `[smoke]`) is needed for this command."""
