"""The conversion reports: what a conversion did (or, dry run, would do), as data; the CLI renders it.

Three kinds share ConvertReportBase: ConversionReport (between safetensors dialects, here),
GGUFConversionReport (to GGUF, convert/to_gguf.py) and FromGGUFReport (from GGUF, convert/from_gguf.py).
The base holds what they have in common: the fields every kind records (src, dst, version, written,
tensors_verified, seconds, extra), `failed()` (from Verdict: an error finding fails) and the first and last
pieces of `to_json` ("src", "dst", "from", "to", "version" ... "seconds", then `extra`). The middle of each
JSON differs by kind and stays in its class: the keys users and the schema tests read are kept as they are,
in their order, so the kinds are not merged into one class (a dialect conversion has config changes and
shards, a GGUF one types and metadata keys); `counts()` is the dialect report's alone for the same reason."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

from ..findings import Finding, Verdict
from .configs import KeyChange
from .plan import ConversionPlan, TensorAction, tensor_bytes


class ConvertReportBase(Verdict):
    """What every conversion report shares. Each kind is a dataclass that declares these fields itself:
    as base dataclass fields, the ones with defaults would come before each kind's required fields, which
    the kinds' positional constructors and frozen/mutable split do not allow."""

    if TYPE_CHECKING:  # declared here, defined by each kind as a dataclass field
        src: str
        dst: str
        version: str
        written: bool  # DST is in place
        tensors_verified: int  # written and checked against the plan
        seconds: float
        extra: dict[str, Any]

    def json_head(self, from_: str, to: str) -> dict[str, Any]:
        """The keys every conversion's JSON opens with."""
        return {"src": self.src, "dst": self.dst, "from": from_, "to": to, "version": self.version}

    def json_tail(self) -> dict[str, Any]:
        """The keys every conversion's JSON closes with: the wall time, then what the caller added."""
        return {"seconds": round(self.seconds, 3), **self.extra}


@dataclass(frozen=True)
class ConversionReport(ConvertReportBase):
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
            **self.json_head(self.from_dialect, self.to),
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
            **self.json_tail(),
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
