"""compat: for each engine profile (or the named ones) a verdict on one checkpoint, as one immutable report.

Header-level like verify: reads config.json and safetensors headers, never tensor data, never torch.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from ..checkpoint import Checkpoint, open_checkpoint
from ..checkpoint.drafter import drafter_of
from ..checkpoint.target import TargetConfig, read_target
from ..checks.context import CheckContext, CheckOptions
from ..checks.pairing import borrow_target_vocab
from ..checks.suite import run_checks
from ..checks.tensors import unexpected_names
from ..engines import PROFILES, EngineRef, Profile, parse_ref, resolve
from ..engines.checked import edge_finding
from ..engines.judge import EngineVerdict, judge
from ..errors import SourceError
from ..findings import Finding, Verdict
from ..sources import Source

EMITS: frozenset[str] = frozenset({"DF851"})


@dataclass(frozen=True)
class CompatReport(Verdict):
    path: str
    dialect: str | None
    version: str | None
    verdicts: tuple[EngineVerdict, ...]
    named: bool  # the engines were named (--engine): every one must load
    family: dict[str, Any] | None = (
        None  # the DFlash family beside plain DFlash / DFlash2 (formats/families.py)
    )
    kind: ClassVar[str] = (
        "compat"  # a report kind (dflash2_ckpt.report): text layout in report/text_engines.py
    )

    @property
    def subject(self) -> str:
        return self.path

    @property
    def findings(self) -> tuple[Finding, ...]:
        """Every verdict's reasons, for the sarif / github reporters (each message names its engine). One
        rule for every format (docs/compat.md): without --engine the question is "does some engine load
        it?", so while one does, a release that refuses it is a warning, never an error that the exit
        code (0) would contradict."""
        reasons = tuple(r for v in self.verdicts for r in v.reasons)
        if self.named or self.failed():
            return reasons
        return tuple(
            dataclasses.replace(r, severity="warning") if r.severity == "error" else r for r in reasons
        )

    def failed(self, strict: bool = False) -> bool:
        """Named engines: any that does not load. Otherwise: none loads it."""
        loads = [v.verdict == "loads" for v in self.verdicts]
        return not all(loads) if self.named else not any(loads)

    def to_json(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "dialect": self.dialect,
            "version": self.version,
            "family": self.family,
            "engines": [v.to_json() for v in self.verdicts],
        }


def checkpoint_errors(ckpt: Checkpoint) -> list[Finding]:
    """verify's header-level error findings (no tensor data, no target)."""
    return [f for f in run_checks(CheckContext(ckpt)) if f.severity == "error"]


def verify_findings(
    ckpt: Checkpoint, pair: TargetConfig | None = None, profiles: tuple[Profile, ...] = ()
) -> list[Finding]:
    """verify's header-level findings, with the pairing checks when the target's config is given: the one
    list both verify's and compat's verdicts come from."""
    borrow_target_vocab(ckpt, pair.config if pair is not None else None)
    return run_checks(CheckContext(ckpt, pair, CheckOptions(engines=profiles)))


def engine_verdicts(
    ckpt: Checkpoint,
    profiles: Iterable[Profile],
    found: Iterable[Finding],
    *,
    target: str | None = None,
    quantized_modules: Mapping[str, str] | None = None,
) -> tuple[EngineVerdict, ...]:
    """The verdict of each profile on a checkpoint whose verify findings are `found`: compat's rows and
    verify's per-engine lines, so that verify's errors and compat's verdicts cannot disagree. A target that
    could not be read (DF508) is no error of the drafter: the verdicts say the pairing was not checked."""
    found = list(found)
    unread = [f for f in found if f.code == "DF508"]
    errors = [f for f in found if f.severity == "error" and f.code != "DF508"]
    d = drafter_of(ckpt, target=target, quantized_modules=quantized_modules)
    # the tensors verify calls unexpected (DF202): each engine's loader skips or refuses them
    d = dataclasses.replace(d, unexpected=unexpected_names(found))
    out = tuple(judge(p, d, errors) for p in profiles)
    if unread:
        note = Finding(
            "DF851",
            f"the target was not read ({unread[0].message}): the pairing checks (DF5xx) "
            "did not run, so these verdicts do not cover the target",
            details={"target": target},
        )
        out = tuple(dataclasses.replace(v, reasons=v.reasons + (note,)) for v in out)
    return out


def _read(pair: str | os.PathLike[str] | Source) -> TargetConfig:
    """The target's config; a target that cannot be opened at all is a target not read (DF851), since compat's
    --target also only names the model in the serve commands."""
    try:
        return read_target(pair)
    except SourceError as e:
        return TargetConfig(str(pair), None, e.message)


def compat(
    path: str | os.PathLike[str] | Source | Checkpoint,
    *,
    engines: Iterable[str | EngineRef] = (),
    target: str | None = None,
    quantized_modules: Mapping[str, str] | None = None,
    findings: Iterable[Finding] | None = None,
    pair: str | os.PathLike[str] | Source | TargetConfig | None = None,
) -> CompatReport:
    """Raises SourceError when the checkpoint cannot be read, UnknownEngine for a name no profile covers.
    `findings`: the checkpoint's verify findings when the caller has them (else they are computed); an
    error an engine would hit makes that engine's verdict `fails` (DF813). `pair`: the target to run verify's
    pairing checks against (its config.json; default: `target` when that is a local directory), so a pairing
    error (DF501, DF503, DF504, ...) decides the verdict exactly as it fails verify.

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
    if pair is None and target is not None and os.path.isdir(target):
        pair = target
    paired = pair if isinstance(pair, TargetConfig) or pair is None else _read(pair)
    # the engines named are the ones verify --engine judges: the same findings, the same verdicts
    found = verify_findings(ckpt, paired, profiles if named else ()) if findings is None else list(findings)
    verdicts = engine_verdicts(ckpt, profiles, found, target=target, quantized_modules=quantized_modules)
    det = ckpt.detection  # what the report names: no second drafter (quantized modules, file listing)
    return CompatReport(
        ckpt.label,
        det.dialect if det else None,
        det.version if det else None,
        tuple(at_edge(v, asked.get(v.profile)) for v in verdicts),
        bool(named),
        family_json(ckpt),
    )


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
    return {
        "name": fam.name,
        "label": fam.label,
        "architecture": fam.architecture,
        "evidence": list(fam.evidence),
    }
