"""Which module emits each finding code, built from the modules' own `EMITS` declarations.

Every module that creates findings declares `EMITS: frozenset[str] = frozenset({...})` at module
level. The declarations are read from the source with `ast`, not by importing the modules, so
asking never imports torch (the smoke modules) on the header-level path, and a module another
branch adds is found without a list to keep up to date.
"""

from __future__ import annotations

import ast
from functools import lru_cache
from pathlib import Path

import dflash2_ckpt

PACKAGE = Path(dflash2_ckpt.__file__).resolve().parent  # the package whose modules declare EMITS


def _emits(tree: ast.Module) -> frozenset[str] | None:
    for node in tree.body:
        target: ast.expr
        value: ast.expr | None
        if isinstance(node, ast.AnnAssign):
            target, value = node.target, node.value
        elif isinstance(node, ast.Assign) and len(node.targets) == 1:
            target, value = node.targets[0], node.value
        else:
            continue
        if not (isinstance(target, ast.Name) and target.id == "EMITS"):
            continue
        # frozenset({...string literals...}): anything computed would hide a code from this registry
        if (
            isinstance(value, ast.Call)
            and isinstance(value.func, ast.Name)
            and value.func.id == "frozenset"
            and len(value.args) <= 1
            and not value.keywords
        ):
            try:
                return frozenset(ast.literal_eval(value.args[0])) if value.args else frozenset()
            except ValueError:
                pass
        raise ValueError("EMITS must be frozenset({...}) of string literals")
    return None


@lru_cache(maxsize=1)
def declarations() -> dict[str, frozenset[str]]:
    """Module name (dflash2_ckpt.checks.tensors) -> the codes it declares, for every declaring module."""
    out: dict[str, frozenset[str]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        try:
            codes = _emits(ast.parse(path.read_text(encoding="utf-8"), filename=str(path)))
        except ValueError as e:
            raise ValueError(f"{path}: {e}") from None
        if codes is not None:
            rel = path.relative_to(PACKAGE.parent).with_suffix("")
            out[".".join(p for p in rel.parts if p != "__init__")] = codes
    return out


def emitters() -> dict[str, list[str]]:
    """Code -> every module that claims it (exactly one, when the registry is consistent)."""
    out: dict[str, list[str]] = {}
    for module, codes in declarations().items():
        for code in codes:
            out.setdefault(code, []).append(module)
    return out


def emitter_of(code: str) -> str:
    """The module that emits `code`. KeyError when none claims it; ValueError when several do."""
    mods = emitters().get(code)
    if not mods:
        raise KeyError(f"no module declares {code} in its EMITS")
    if len(mods) > 1:
        raise ValueError(f"{code} is claimed by {', '.join(mods)}")
    return mods[0]
