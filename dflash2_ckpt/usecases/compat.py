"""compat: for each engine profile (or the named ones) a verdict on one checkpoint, as one immutable report.

Header-level like verify: reads config.json and safetensors headers, never tensor data, never torch.
"""
from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass
from typing import Any, ClassVar, Iterable, Mapping

from ..checkpoint import Checkpoint, open_checkpoint
from ..checks.context import CheckContext
from ..checks.suite import run_checks
from ..checks.tensors import unexpected_names
from ..engines import PROFILES, Drafter, EngineRef, Profile, parse_ref, resolve
from ..engines.checked import edge_finding
from ..engines.judge import EngineVerdict, judge
from ..findings import Finding, Verdict
from ..checkpoint.quant import quantized_modules as header_quantized_modules
from ..sources import Source


@dataclass(frozen=True)
class CompatReport(Verdict):
    path: str
    dialect: str | None
    version: str | None
    verdicts: tuple[EngineVerdict, ...]
    named: bool                      # the engines were named (--engine): every one must load
    family: dict[str, Any] | None = None    # the DFlash family beside plain DFlash / DFlash2 (formats/families.py)
    kind: ClassVar[str] = "compat"   # a report kind (dflash2_ckpt.report): text layout in report/text_engines.py

    @property
    def subject(self) -> str:
        return self.path

    @property
    def findings(self) -> tuple[Finding, ...]:
        """Every verdict's reasons, for the sarif / github reporters (each message names its engine)."""
        return tuple(r for v in self.verdicts for r in v.reasons)

    def failed(self, strict: bool = False) -> bool:
        """Named engines: any that does not load. Otherwise: none loads it."""
        loads = [v.verdict == "loads" for v in self.verdicts]
        return not all(loads) if self.named else not any(loads)

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path, "dialect": self.dialect, "version": self.version, "family": self.family,
                "engines": [v.to_json() for v in self.verdicts]}


def drafter_of(ckpt: Checkpoint, *, target: str | None = None,
               quantized_modules: Mapping[str, str] | None = None) -> Drafter:
    det = ckpt.detection
    modules = quantized_modules if quantized_modules is not None else header_quantized_modules(ckpt)
    return Drafter(dialect=det.dialect if det else None, version=det.version if det else None, spec=ckpt.spec,
                   config=ckpt.config or {}, tensors=frozenset(ckpt.tensors), quantized_modules=dict(modules or {}),
                   path=ckpt.label, target=target)


def checkpoint_errors(ckpt: Checkpoint) -> list[Finding]:
    """verify's header-level error findings (no tensor data, no target)."""
    return [f for f in run_checks(CheckContext(ckpt)) if f.severity == "error"]


def compat(path: str | os.PathLike[str] | Source | Checkpoint, *, engines: Iterable[str | EngineRef] = (),
           target: str | None = None, quantized_modules: Mapping[str, str] | None = None,
           findings: Iterable[Finding] | None = None) -> CompatReport:
    """Raises SourceError when the checkpoint cannot be read, UnknownEngine for a name no profile covers.
    `findings`: the checkpoint's verify findings when the caller has them (else they are computed); an
    error an engine would hit makes that engine's verdict `fails` (DF813).

    A needs-conversion verdict here says only that the engine reads another dialect; whether convert does
    it and that engine loads the result is checked one layer up (dflash2_ckpt.convert.advice.compat, which
    the command line and the package's `compat` use)."""
    named = list(engines)
    # each profile once, with the first version named for it (DF816 where that lies past the checked edge)
    asked: dict[Profile, EngineRef | str | None] = {}
    for e in named:
        asked.setdefault(resolve(e), e)
    profiles: tuple[Profile, ...] = tuple(asked) if named else PROFILES
    ckpt = path if isinstance(path, Checkpoint) else open_checkpoint(path)
    d = drafter_of(ckpt, target=target, quantized_modules=quantized_modules)
    found = list(run_checks(CheckContext(ckpt)) if findings is None else findings)
    errors = [f for f in found if f.severity == "error"]
    # the tensors verify calls unexpected (DF202): each engine's loader skips or refuses them
    d = dataclasses.replace(d, unexpected=unexpected_names(found))
    verdicts = tuple(at_edge(judge(p, d, errors), asked.get(p)) for p in profiles)
    return CompatReport(ckpt.label, d.dialect, d.version, verdicts, bool(named), family_json(ckpt))


def at_edge(v: EngineVerdict, ref: EngineRef | str | None) -> EngineVerdict:
    """The verdict for the version named: DF816 first where it lies past the releases whose code was read."""
    if ref is None:
        return v
    version = ref.version if isinstance(ref, EngineRef) else parse_ref(ref).version
    edge = edge_finding(v.profile, ref)
    return dataclasses.replace(v, asked=version, reasons=((edge,) if edge else ()) + v.reasons)


def family_json(ckpt: Checkpoint) -> dict[str, Any] | None:
    """The drafter's family for reports: name, label, the architecture vLLM is asked for, the evidence."""
    fam = ckpt.detection.family if ckpt.detection is not None else None
    if fam is None:
        return None
    return {"name": fam.name, "label": fam.label, "architecture": fam.architecture, "evidence": list(fam.evidence)}
