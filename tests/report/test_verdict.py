"""One report contract: every report kind is a Verdict, with findings, failed(strict) and a derived passed."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import dflash2_ckpt
from dflash2_ckpt.findings import Finding, Verdict

PACKAGE = Path(dflash2_ckpt.__file__).resolve().parent


def _declares_kind(s: ast.stmt) -> bool:
    """`kind: ClassVar[str] = "..."`, or a plain `kind = "..."` that would dodge the annotation."""
    if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name) and s.target.id == "kind":
        return "ClassVar" in ast.unparse(s.annotation)
    return (
        isinstance(s, ast.Assign)
        and any(isinstance(t, ast.Name) and t.id == "kind" for t in s.targets)
        and isinstance(s.value, ast.Constant)
        and isinstance(s.value.value, str)
    )


def _report_kinds() -> list[type]:
    """Every class in the package that declares a report kind, found in the source."""
    out = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ClassDef) and any(_declares_kind(s) for s in node.body):
                rel = path.relative_to(PACKAGE.parent).with_suffix("")
                module = importlib.import_module(".".join(p for p in rel.parts if p != "__init__"))
                out.append(getattr(module, node.name))
    return out


def test_every_report_kind_keeps_the_contract() -> None:
    kinds = _report_kinds()
    # verify, inspect, compat, check, push, hook, convert (and to / from GGUF), audit, accept, smoke, diff, config
    assert len(kinds) >= 14
    assert {"FromGGUFReport", "GGUFConversionReport"} <= {k.__name__ for k in kinds}
    for cls in kinds:
        assert issubclass(cls, Verdict), cls
        assert isinstance(cls.passed, property), f"{cls.__name__}.passed is not derived"


def test_passed_is_derived_from_failed() -> None:
    class Kind(Verdict):
        kind = "test"
        subject = "x"

        def __init__(self, findings: list[Finding]) -> None:
            self.findings = findings

    warn, err = Finding("DF114", "no block_size"), Finding("DF106", "mask outside")
    assert Kind([]).passed and Kind([warn]).passed and not Kind([warn]).failed()
    assert Kind([warn]).failed(strict=True) and not Kind([err]).passed


def test_renderers_read_the_verdict_without_probing() -> None:
    """github, sarif and text read `failed()` from the Verdict; none asks whether a report has it."""
    for name in ("github.py", "sarif.py", "text.py"):
        text = (PACKAGE / "report" / name).read_text()
        assert 'getattr(report, "failed"' not in text and 'hasattr(report, "failed")' not in text, name
