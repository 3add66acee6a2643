"""One report contract: every report kind is a Verdict, with findings, failed(strict) and a derived passed."""
from __future__ import annotations

import ast
import importlib
from pathlib import Path

import dflash2_ckpt
from dflash2_ckpt.findings import Finding, Verdict

PACKAGE = Path(dflash2_ckpt.__file__).resolve().parent


def _report_kinds() -> list[type]:
    """Every class in the package that declares a report `kind: ClassVar[str] = ...`, found in the source."""
    out = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ClassDef) and any(
                    isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name) and s.target.id == "kind"
                    and "ClassVar" in ast.unparse(s.annotation) for s in node.body):
                rel = path.relative_to(PACKAGE.parent).with_suffix("")
                module = importlib.import_module(".".join(p for p in rel.parts if p != "__init__"))
                out.append(getattr(module, node.name))
    return out


def test_every_report_kind_keeps_the_contract() -> None:
    kinds = _report_kinds()
    assert len(kinds) >= 10      # verify, inspect, compat, check, push, hook, convert, audit, accept, smoke, diff
    for cls in kinds:
        assert issubclass(cls, Verdict), cls
        assert isinstance(getattr(cls, "passed"), property), f"{cls.__name__}.passed is not derived"


def test_passed_is_derived_from_failed() -> None:
    class Kind(Verdict):
        kind = "test"
        subject = "x"

        def __init__(self, findings: list[Finding]) -> None:
            self.findings = findings
    warn, err = Finding("DF114", "no block_size"), Finding("DF106", "mask outside")
    assert Kind([]).passed and Kind([warn]).passed and not Kind([warn]).failed()
    assert Kind([warn]).failed(strict=True) and not Kind([err]).passed
