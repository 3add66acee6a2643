"""compat: for each engine profile (or the named ones) a verdict on one checkpoint, as one immutable report.

Header-level like verify: reads config.json and safetensors headers, never tensor data, never torch.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, ClassVar, Iterable, Mapping

from .checkpoint import Checkpoint, open_checkpoint
from .checks.context import CheckContext
from .checks.suite import run_checks
from .convert.advice import converted_drafter
from .engine_input import drafter_of
from .engines import PROFILES, Drafter, EngineRef, Profile, resolve
from .engines.judge import EngineVerdict, conversion_target, judge
from .errors import Dflash2Error
from .findings import Finding
from .sources import Source

__all__ = ["CompatReport", "compat", "drafter_of"]
EMITS: frozenset[str] = frozenset({"DF814"})


@dataclass(frozen=True)
class CompatReport:
    path: str
    dialect: str | None
    version: str | None
    verdicts: tuple[EngineVerdict, ...]
    named: bool                      # the engines were named (--engine): every one must load
    kind: ClassVar[str] = "compat"   # a report kind (dflash2_ckpt.report): text layout in report/text_engines.py

    @property
    def subject(self) -> str:
        return self.path

    @property
    def findings(self) -> tuple[Finding, ...]:
        """Every verdict's reasons, for the sarif / github reporters (each message names its engine)."""
        return tuple(r for v in self.verdicts for r in v.reasons)

    def failed(self) -> bool:
        """Named engines: any that does not load. Otherwise: none loads it."""
        loads = [v.verdict == "loads" for v in self.verdicts]
        return not all(loads) if self.named else not any(loads)

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path, "dialect": self.dialect, "version": self.version,
                "engines": [v.to_json() for v in self.verdicts]}


def _advice_holds(v: EngineVerdict, ckpt: Checkpoint, d: Drafter) -> EngineVerdict:
    """A needs-conversion verdict stands only when convert would do it and that engine loads the result;
    otherwise the verdict is `fails` with convert's refusal, or with what still stops the converted drafter."""
    if v.verdict != "needs-conversion":
        return v
    p, to = v.profile, conversion_target(v.profile)
    reads = "/".join(sorted(p.reads))
    try:
        after = judge(p, converted_drafter(ckpt, to, target=d.target))
    except Dflash2Error as e:
        return EngineVerdict(p, "fails", (Finding(
            "DF814", f"{p.title} reads {reads}, not the {d.dialect} dialect, and `dflash2-ckpt convert --to {to}` "
            f"refuses this checkpoint: {e.message}", details={"to": to, "refusal": e.message}),), None)
    if after.verdict in ("loads", "degraded"):
        return v
    why = "; ".join(f"{r.code} {r.message}" for r in after.reasons if r.severity == "error") or after.verdict
    return EngineVerdict(p, "fails", (Finding(
        "DF814", f"{p.title} reads {reads}, not the {d.dialect} dialect, and converted with `convert --to {to}` "
        f"it would still not load: {why}", details={"to": to, "after": after.verdict}),) + after.reasons, None)


def checkpoint_errors(ckpt: Checkpoint) -> list[Finding]:
    """verify's header-level error findings (no tensor data, no target)."""
    return [f for f in run_checks(CheckContext(ckpt)) if f.severity == "error"]


def compat(path: str | os.PathLike[str] | Source | Checkpoint, *, engines: Iterable[str | EngineRef] = (),
           target: str | None = None, quantized_modules: Mapping[str, str] | None = None,
           findings: Iterable[Finding] | None = None) -> CompatReport:
    """Raises SourceError when the checkpoint cannot be read, UnknownEngine for a name no profile covers.
    `findings`: the checkpoint's verify findings when the caller has them (else they are computed); an
    error an engine would hit makes that engine's verdict `fails`."""
    named = list(engines)
    profiles: tuple[Profile, ...] = tuple(dict.fromkeys(resolve(e) for e in named)) if named else PROFILES
    ckpt = path if isinstance(path, Checkpoint) else open_checkpoint(path)
    d = drafter_of(ckpt, target=target, quantized_modules=quantized_modules)
    errors = checkpoint_errors(ckpt) if findings is None else [f for f in findings if f.severity == "error"]
    verdicts = tuple(_advice_holds(judge(p, d, errors), ckpt, d) for p in profiles)
    return CompatReport(ckpt.label, d.dialect, d.version, verdicts, bool(named))
