"""One audit row per drafter: identity, findings by severity, and one verdict per engine version."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from ..findings import Finding, keep

SEVERITIES = ("error", "warning", "info")


@dataclass(frozen=True)
class Row:
    input: str  # what the user named
    repo: str  # repo id, or the local path
    revision: str | None = None  # resolved commit sha (Hub)
    subfolder: str | None = None
    dialect: str | None = None
    version: str | None = None
    target: str | None = None
    counts: Mapping[str, int] = field(default_factory=dict)
    findings: tuple[Mapping[str, Any], ...] = ()
    engines: tuple[Mapping[str, Any], ...] = ()  # compat's entries: engine, versions, verdict, reasons, serve
    error: Mapping[str, Any] | None = None  # the drafter could not be read: type, message, hint
    cached: bool = False

    @property
    def readable(self) -> bool:
        return self.error is None

    def verdicts(self) -> dict[str, str]:
        return {column(e): str(e.get("verdict")) for e in self.engines}

    def loads_cleanly(self, engines_named: bool) -> bool:
        """No error finding, and every named engine loads it (or, with none named, at least one does)."""
        if not self.readable or self.counts.get("error", 0):
            return False
        loads = [v == "loads" for v in self.verdicts().values()]
        return all(loads) if engines_named else any(loads)

    def filtered(self, select: Sequence[str], ignore: Sequence[str]) -> Row:
        """The row with only the findings that `select` / `ignore` keep (this drafter's settings), recounted."""

        kept = tuple(f for f in self.findings if keep(str(f["code"]), select, ignore))
        return replace(
            self, findings=kept, counts={s: sum(f.get("severity") == s for f in kept) for s in SEVERITIES}
        )

    def finding_objects(self) -> tuple[Any, ...]:
        """The findings as Finding objects again (rows keep JSON, so a cached row reads like a fresh one)."""

        keys = ("field", "tensor", "file")
        return tuple(
            Finding(
                f["code"],
                f["message"],
                severity=f.get("severity"),
                details=f.get("details") or {},
                **{k: f[k] for k in keys if f.get(k) is not None},
            )
            for f in self.findings
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "input": self.input,
            "repo": self.repo,
            "revision": self.revision,
            "subfolder": self.subfolder,
            "dialect": self.dialect,
            "version": self.version,
            "target": self.target,
            "counts": {s: int(self.counts.get(s, 0)) for s in SEVERITIES},
            "findings": [dict(f) for f in self.findings],
            "engines": [dict(e) for e in self.engines],
            "error": dict(self.error) if self.error is not None else None,
        }

    @classmethod
    def from_json(cls, doc: Mapping[str, Any], *, input: str, cached: bool = False) -> Row:
        return cls(
            input=input,
            repo=doc["repo"],
            revision=doc.get("revision"),
            subfolder=doc.get("subfolder"),
            dialect=doc.get("dialect"),
            version=doc.get("version"),
            target=doc.get("target"),
            counts=dict(doc.get("counts") or {}),
            findings=tuple(doc.get("findings") or ()),
            engines=tuple(doc.get("engines") or ()),
            error=doc.get("error"),
            cached=cached,
        )


def column(entry: Mapping[str, Any]) -> str:
    """The column an engine verdict goes in: the engine and its version range, e.g. `vllm >=0.29`."""
    versions = str(entry.get("versions") or "").strip()
    return f"{entry.get('engine')} {versions}".strip()


def columns(rows: Iterable[Row]) -> list[str]:
    """Engine columns in first-seen order (the profiles' own order)."""
    out: list[str] = []
    for r in rows:
        for e in r.engines:
            c = column(e)
            if c not in out:
                out.append(c)
    return out
