"""ConversionReport: what a conversion did (or, dry run, would do), as data; the CLI renders it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

from ..findings import Finding, Verdict
from .configs import KeyChange
from .plan import ConversionPlan, TensorAction, tensor_bytes


@dataclass(frozen=True)
class ConversionReport(Verdict):
    src: str
    dst: str
    from_dialect: str
    to: str
    version: str
    dry_run: bool
    config: dict[str, Any]
    config_changes: tuple[KeyChange, ...]
    tensors: tuple[TensorAction, ...]
    shards: tuple[tuple[str, int, int], ...]  # (file, tensors, bytes)
    files_copied: tuple[str, ...]
    files_skipped: tuple[tuple[str, str], ...]
    notes: tuple[str, ...]
    written: bool = False  # DST is in place
    tensors_verified: int = 0  # written and checked against the plan (convert/stream.py)
    verify_findings: tuple[Finding, ...] = ()
    cleaned: tuple[str, ...] = ()
    seconds: float = 0.0
    extra: dict[str, Any] = field(default_factory=dict)
    kind: ClassVar[str] = "convert"

    @property
    def subject(self) -> str:
        return self.dst

    @property
    def findings(self) -> tuple[Finding, ...]:
        """What verify says about the written output (empty for a dry run)."""
        return self.verify_findings

    @property
    def bytes_copied(self) -> int:
        return tensor_bytes(self.tensors, dropped=False)

    @property
    def bytes_dropped(self) -> int:
        return tensor_bytes(self.tensors, dropped=True)

    def counts(self) -> dict[str, int]:
        out = {a: sum(t.action == a for t in self.tensors) for a in ("copy", "rename", "drop")}
        for a in ("moved", "changed", "dropped", "added"):
            out[f"keys_{a}"] = sum(c.action == a for c in self.config_changes)
        return out

    def to_json(self) -> dict[str, Any]:
        return {
            "src": self.src,
            "dst": self.dst,
            "from": self.from_dialect,
            "to": self.to,
            "version": self.version,
            "dry_run": self.dry_run,
            "written": self.written,
            "counts": self.counts(),
            "bytes_copied": self.bytes_copied,
            "bytes_dropped": self.bytes_dropped,
            "tensors_verified": self.tensors_verified,
            "config_changes": [c.to_json() for c in self.config_changes],
            "tensors": [t.to_json() for t in self.tensors],
            "shards": [{"file": f, "tensors": n, "bytes": b} for f, n, b in self.shards],
            "files_copied": list(self.files_copied),
            "files_skipped": [{"file": f, "reason": r} for f, r in self.files_skipped],
            "notes": list(self.notes),
            "cleaned": list(self.cleaned),
            "verify_findings": [f.to_json() for f in self.verify_findings],
            "config": self.config,
            "seconds": round(self.seconds, 3),
            **self.extra,
        }


def report_from_plan(plan: ConversionPlan, *, dry_run: bool, **kw: Any) -> ConversionReport:
    notes = list(plan.notes)
    if plan.source_errors:
        notes.append(
            f"the source has {len(plan.source_errors)} error finding(s) that convert carries over "
            f"unchanged, e.g. {plan.source_errors[0]}"
        )
    return ConversionReport(
        src=plan.src,
        dst=plan.dst,
        from_dialect=plan.src_dialect,
        to=plan.to,
        version=plan.version,
        dry_run=dry_run,
        config=plan.config,
        config_changes=tuple(plan.changes),
        tensors=tuple(plan.tensors),
        shards=tuple((s.name, len(s.tensors), s.size) for s in plan.shards),
        files_copied=tuple(plan.copy_files),
        files_skipped=tuple(plan.skip_files),
        notes=tuple(notes),
        **kw,
    )
