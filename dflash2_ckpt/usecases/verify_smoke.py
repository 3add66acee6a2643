"""verify, then (optionally) the smoke forward, as one result: what `verify --smoke` and `push` both run.

The smoke only runs on a checkpoint whose headers pass (one that fails them cannot be loaded); its
findings go through the same --select / --ignore as verify's.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

from ..errors import MissingDependencyError
from ..findings import Finding, Verdict, fails, filter_findings
from ..sources import Source
from .verify import Report, verify

if TYPE_CHECKING:  # the smoke package loads only when --smoke runs
    from ..smoke.report import SmokeReport

Target = str | os.PathLike[str] | Source | None


@dataclass(frozen=True)
class CheckResult(Verdict):
    verify: Report
    smoke: SmokeReport | None = None  # what run_smoke returned, when the smoke ran
    smoke_findings: tuple[Finding, ...] = field(default=())
    kind: ClassVar[str] = "check"

    @property
    def subject(self) -> str:
        return self.verify.subject

    @property
    def findings(self) -> tuple[Finding, ...]:
        return (*self.verify.findings, *self.smoke_findings)

    def smoke_failed(self, strict: bool = False) -> bool:
        """The smoke ran and its findings (after --select / --ignore) fail it."""
        return self.smoke is not None and fails(self.smoke_findings, strict)

    def failed(self, strict: bool = False) -> bool:
        return self.verify.failed(strict) or self.smoke_failed(strict)

    def to_json(self) -> dict[str, Any]:
        doc = self.verify.to_json()
        if self.smoke is not None:
            doc["smoke"] = self.smoke.to_json()
            doc["smoke"]["findings"] = [f.to_json() for f in self.smoke_findings]
            doc["passed"] = doc["passed"] and not self.smoke_failed()
        return doc


def _run_smoke(source: Any, target: Target) -> SmokeReport:
    try:
        from ..smoke import run_smoke  # lazy: smoke loads only on this path
    except ImportError as e:
        raise MissingDependencyError(
            f"--smoke needs the smoke forward, which could not be imported ({e})",
            hint="pip install 'dflash2-ckpt[smoke]'",
        ) from None
    return run_smoke(source) if target is None else run_smoke(source, target=target)


def check(
    source: Any,
    *,
    target: Target = None,
    select: Iterable[str] = (),
    ignore: Iterable[str] = (),
    scan: bool = False,
    smoke: bool = False,
    strict: bool = False,
    engines: Iterable[str] = (),
    progress: Callable[[int, int, str], None] | None = None,
) -> CheckResult:
    """verify(source); with smoke=True and headers that pass (strictly, if asked), the smoke forward too.
    `target` is a local path or an opened Source (a Hub repo): the same one goes to the smoke. `engines`:
    the engine profiles verify judges against (`vllm@0.29.0`; default: the newest that support the drafter)."""
    select, ignore = list(select), list(ignore)
    report = verify(
        source, target=target, select=select, ignore=ignore, scan=scan, engines=engines, progress=progress
    )
    if not smoke or report.failed(strict):
        return CheckResult(report)
    result = _run_smoke(
        report.checkpoint or source, target
    )  # the checkpoint verify opened, not a second open
    found = filter_findings(result.findings, select, ignore)
    return CheckResult(report, result, tuple(found))
