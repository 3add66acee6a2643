"""The code registry against the modules that emit findings and the tests that produce them."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

import dflash2_ckpt
from _kit.emitters import _emits, declarations, emitter_of, emitters
from dflash2_ckpt.codes import REGISTRY

PACKAGE = Path(dflash2_ckpt.__file__).resolve().parent
STABLE = sorted(c.code for c in REGISTRY.values() if c.status == "stable")


def test_every_stable_code_is_claimed_by_exactly_one_module() -> None:
    claims = emitters()
    assert {c: m for c, m in claims.items() if len(m) != 1} == {}
    assert [c for c in STABLE if c not in claims] == []
    assert sorted(set(claims) - set(REGISTRY)) == [], "a module claims a code the registry does not know"


def test_emitter_of_names_the_module_and_refuses_unknown_codes() -> None:
    assert emitter_of("DF206") == "dflash2_ckpt.checks.tensors"
    assert emitter_of("DF611") == "dflash2_ckpt.checks.content"
    with pytest.raises(KeyError):
        emitter_of("DF999")


def _literal_codes(tree: ast.AST) -> set[str]:
    """Codes written as the first argument of Finding(...) in a module."""
    out = set()
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == "Finding"
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
        ):
            out.add(node.args[0].value)
    return out


def test_every_module_that_builds_findings_declares_what_it_builds() -> None:
    declared = declarations()
    for path in sorted(PACKAGE.rglob("*.py")):
        codes = _literal_codes(ast.parse(path.read_text()))
        if not codes:
            continue
        rel = path.relative_to(PACKAGE.parent).with_suffix("")
        module = ".".join(p for p in rel.parts if p != "__init__")
        assert module in declared, f"{module} builds {sorted(codes)} but declares no EMITS"
        assert codes <= declared[module], (
            f"{module} builds {sorted(codes - declared[module])} it does not declare"
        )


def test_emits_must_be_a_literal() -> None:
    with pytest.raises(ValueError, match="literals"):
        _emits(ast.parse('EMITS = frozenset(f"DF1{n}" for n in range(3))'))
    assert _emits(ast.parse('EMITS: frozenset[str] = frozenset({"DF101"})')) == {"DF101"}
    assert _emits(ast.parse("X = 1")) is None


def test_registry_rows_are_well_formed() -> None:
    for c in REGISTRY.values():
        assert re.fullmatch(r"DF[1-9]\d\d", c.code)  # DF8xx engine compatibility
        assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", c.name)
    assert len({c.name for c in REGISTRY.values()}) == len(REGISTRY)


def test_every_registered_code_is_produced(produced_codes: set[str]) -> None:
    """Runs last in a full run (tests/conftest.py records every Finding built in the session)."""
    missing = [c for c in STABLE if c not in produced_codes]
    assert missing == [], f"no test or fixture produces {missing}: add one (or deprecate the code)"


def test_the_recorder_counts_package_findings_only(request: pytest.FixtureRequest) -> None:
    from conftest import PRODUCED
    from dflash2_ckpt.findings import Finding
    from dflash2_ckpt.formats.config_findings import unknown_key

    produced = request.config.stash[PRODUCED]
    had = "DF116" in produced
    produced.discard("DF116")
    try:
        Finding("DF116", "written by a test")
        assert "DF116" not in produced
        unknown_key("x")
        assert "DF116" in produced
    finally:
        if had:
            produced.add("DF116")
