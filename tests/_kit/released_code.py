"""Load a few small pure functions out of an engine's released wheel, without importing the engine.

`extract` parses the file with `ast`, keeps the named top-level definitions plus every top-level definition
they mention (helpers, constants, decorators), and runs only those in a namespace the caller seeds with the
few outside names they need (typing names, a stub enum): nothing that wants torch or a GPU is imported.
"""

from __future__ import annotations

import ast
import dataclasses
import inspect
import itertools
import sys
import types
import typing
from collections.abc import Mapping, Sequence
from numbers import Integral
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from dflash2_ckpt.engines.wheels import find_wheel, read_member, wheel_dir

BASE_ENV: dict[str, Any] = {
    **{n: getattr(typing, n) for n in ("Any", "List", "Optional", "Tuple", "Dict", "Union", "Iterable")},
    "Sequence": Sequence,
    "Mapping": Mapping,
    "Integral": Integral,
    "dataclass": dataclasses.dataclass,
    "field": dataclasses.field,
    "inspect": inspect,
    "Literal": typing.Literal,
}


_COUNTER = itertools.count()


def _defined(node: ast.stmt) -> list[str]:
    if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
        return [node.name]
    if isinstance(node, ast.Assign):
        return [t.id for t in node.targets if isinstance(t, ast.Name)]
    if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
        return [node.target.id]
    return []


def extract(
    source: str, names: Sequence[str], env: Mapping[str, Any] | None = None, filename: str = "<wheel>"
) -> dict[str, Any]:
    tree = ast.parse(source)
    defs: dict[str, ast.stmt] = {}
    for node in tree.body:
        for name in _defined(node):
            defs[name] = node
    keep: set[int] = set()
    stack, seen = list(names), set()
    while stack:
        name = stack.pop()
        if name in seen or name not in defs:
            continue
        seen.add(name)
        node = defs[name]
        keep.add(id(node))
        stack += [n.id for n in ast.walk(node) if isinstance(n, ast.Name)]
    missing = [n for n in names if n not in defs]
    assert not missing, f"{filename} no longer defines {missing}"
    module = ast.Module(body=[n for n in tree.body if id(n) in keep], type_ignores=[])
    # dataclasses look the defining module up in sys.modules, so the code runs in a registered module
    mod = types.ModuleType(f"released_{next(_COUNTER)}")
    mod.__dict__.update({**BASE_ENV, **(env or {})})
    sys.modules[mod.__name__] = mod
    exec(compile(module, filename, "exec"), mod.__dict__)
    return mod.__dict__


def released_source(dist: str, version: str, path: str) -> str:
    wheel = find_wheel(dist, version)
    if wheel is None:
        pytest.skip(
            f"{dist}=={version} not downloaded: pip download --no-deps -d {wheel_dir()} {dist}=={version}"
        )
    text = read_member(wheel, path)
    assert text is not None, f"{wheel.name} has no {path}"
    return text


class HFConfig(SimpleNamespace):
    """What an engine receives for a config.json: its keys as attributes (absent keys are absent)."""

    def get_text_config(self) -> HFConfig:
        return self


def hf_config(cfg: Mapping[str, Any]) -> HFConfig:
    return HFConfig(**dict(cfg))


def configs() -> list[tuple[str, dict[str, Any]]]:
    """Every readable config.json under fixtures/ (real ones included) and ../shared/real/."""
    import json

    root = Path(__file__).resolve().parents[2]  # tests/_kit/ -> the repository root
    paths = sorted(root.glob("fixtures/**/config.json")) + sorted(root.glob("fixtures/real/*.config.json"))
    shared = root.parent / "shared" / "real"
    if shared.is_dir():
        paths += sorted(shared.glob("*.config.json"))
    out = []
    for p in paths:
        try:
            cfg = json.loads(p.read_text())
        except (ValueError, UnicodeDecodeError):
            continue
        if isinstance(cfg, dict):
            out.append((str(p.relative_to(root.parent)), cfg))
    return out
