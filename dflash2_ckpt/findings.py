"""Findings are data: a stable code, a message that says what breaks and how to fix it, and details."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from dataclasses import field as dc_field
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from .codes import REGISTRY, Severity


@dataclass(frozen=True)
class Fix:
    """That `--fix` can repair a finding (ruff's applicability): `safe` keeps what the drafter means,
    `unsafe` picks a value the files cannot confirm (only with --unsafe-fixes)."""

    applicability: Literal["safe", "unsafe"]
    description: str
    # the text files the fix rewrites, as (name in the checkpoint, old text, new text): what SARIF's `fixes`
    # carry; empty for a header rename (binary) or where the files are not local
    changes: tuple[tuple[str, str, str], ...] = ()

    def to_json(self) -> dict[str, str]:
        return {"applicability": self.applicability, "description": self.description}

    @property
    def marker(self) -> str:
        """ruff's mark after the code in text: `[*]` safe, `[~]` only with --unsafe-fixes too."""
        return "[*]" if self.applicability == "safe" else "[~]"


def fix_marker(f: Finding) -> str:
    return "" if f.fix is None else " " + f.fix.marker


@dataclass(frozen=True)
class Finding:
    code: str
    message: str
    field: str | None = None  # JSON path of the config field, e.g. "dflash_config.block_size"
    tensor: str | None = None
    file: str | None = None
    details: Mapping[str, Any] = dc_field(default_factory=dict)
    severity: Severity | None = None  # None: the registry's default for this code
    fix: Fix | None = dc_field(
        default=None, compare=False
    )  # what `--fix` would do about it (dflash2_ckpt.usecases.fix)

    def __post_init__(self) -> None:
        if self.code not in REGISTRY:
            raise ValueError(f"unregistered finding code {self.code}")
        if self.severity is None:
            object.__setattr__(self, "severity", REGISTRY[self.code].severity)

    @property
    def name(self) -> str:
        return REGISTRY[self.code].name

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "code": self.code,
            "name": self.name,
            "severity": self.severity,
            "message": self.message,
        }
        for key in ("field", "tensor", "file"):
            if getattr(self, key) is not None:
                out[key] = getattr(self, key)
        out["details"] = dict(self.details)
        if self.fix is not None:
            out["fix"] = self.fix.to_json()
        return out


def _matches(code: str, selector: str) -> bool:
    return code.startswith(selector)


def validate_selectors(selectors: Iterable[str]) -> None:
    """Codes or prefixes (DF2, DF20, DF201); an unknown one is a usage error."""
    for s in selectors:
        if not any(_matches(c, s) for c in REGISTRY) or not s.startswith("DF"):
            raise ValueError(f"unknown finding code or prefix {s!r}")


def keep(code: str, select: Iterable[str] = (), ignore: Iterable[str] = ()) -> bool:
    """ruff's rule: the longest matching selector wins, ignore wins ties; no select means all."""
    select = list(select) or ["DF"]
    best_sel = max((len(s) for s in select if _matches(code, s)), default=-1)
    best_ign = max((len(s) for s in ignore if _matches(code, s)), default=-1)
    if best_sel < 0:
        return False
    return best_sel > best_ign


def filter_findings(
    findings: Iterable[Finding], select: Iterable[str] = (), ignore: Iterable[str] = ()
) -> list[Finding]:
    select, ignore = list(select), list(ignore)
    return [f for f in findings if keep(f.code, select, ignore)]


def fails(findings: Iterable[Finding], strict: bool = False) -> bool:
    """The one exit rule: an error finding fails; with strict, a warning does too."""
    bad = ("error", "warning") if strict else ("error",)
    return any(f.severity in bad for f in findings)


def worst(findings: Iterable[Finding]) -> Severity | None:
    order: dict[str, int] = {"info": 0, "warning": 1, "error": 2}
    sev: list[Severity] = [f.severity for f in findings if f.severity is not None]
    if not sev:
        return None
    return max(sev, key=order.__getitem__)


class Verdict:
    """The contract every report kind keeps (verify, inspect, compat, smoke, accept, convert, diff, push,
    hook, audit, verify then smoke): a `kind`, a `subject`, its `findings`, `failed(strict)` and `passed`
    derived from it. By default an error finding fails (`fails`); a kind whose verdict is something else
    (compat: engine verdicts, diff: tensor verdicts, push: whether it uploaded) overrides `failed` only."""

    kind: ClassVar[str]
    if TYPE_CHECKING:  # declared here, defined by each kind (a dataclass field or a property)

        @property
        def subject(self) -> str: ...

        @property
        def findings(self) -> Sequence[Finding]: ...

    def failed(self, strict: bool = False) -> bool:
        return fails(self.findings, strict)

    @property
    def passed(self) -> bool:
        return not self.failed()
