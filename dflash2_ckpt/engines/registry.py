"""All profiles, oldest first within each engine, and how a name or `engine@version` picks one.

An engine is a module of this package that defines `PROFILES` (a tuple of Profile, oldest first) and
optionally `RANK` (display order, lower first; default 100, then by module name): the registry imports every
module here and gathers them, so adding an engine is adding its module (docs/engines.md).
"""

from __future__ import annotations

import importlib
import importlib.util
import pkgutil
import re
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

from ..errors import UsageError
from ..formats.spec import DraftSpec
from .profile import Causality, DrafterVersion, Profile
from .versions import EngineRef, parse_ref, parse_version

# a module that assigns PROFILES at its top level is an engine module; the others (tools such as wheels.py,
# run with -m) are not imported here
_DEFINES = re.compile(r"^PROFILES\b", re.MULTILINE)


def _engine_modules() -> list[ModuleType]:
    """Every module of this package whose PROFILES is a tuple of Profile, in (RANK, name) order."""
    found = []
    package = sys.modules[__package__]
    for info in pkgutil.iter_modules(package.__path__):
        if info.ispkg or info.name == "registry":
            continue
        spec = importlib.util.find_spec(f"{__package__}.{info.name}")
        origin = spec.origin if spec is not None else None
        if origin is None or not _DEFINES.search(Path(origin).read_text(encoding="utf-8")):
            continue
        module = importlib.import_module(f"{__package__}.{info.name}")
        profiles = getattr(module, "PROFILES", None)
        if isinstance(profiles, tuple) and profiles and all(isinstance(p, Profile) for p in profiles):
            found.append(module)
    return sorted(found, key=lambda m: (getattr(m, "RANK", 100), m.__name__))


ENGINE_MODULES: tuple[ModuleType, ...] = tuple(_engine_modules())
PROFILES: tuple[Profile, ...] = tuple(p for m in ENGINE_MODULES for p in m.PROFILES)
ENGINES: tuple[str, ...] = tuple(dict.fromkeys(p.engine for p in PROFILES))


def _conversion_loaders() -> dict[str, Callable[[DraftSpec], Causality | None]]:
    """The loaders a conversion between the nested and flat dialects keeps the drafter exact for: each engine
    with `conversion_loader` profiles, the newest one's rule under its own name and the oldest one's other
    rule as `ENGINE-legacy`."""
    out: dict[str, Callable[[DraftSpec], Causality | None]] = {}
    for engine in ENGINES:
        profiles = [p for p in PROFILES if p.engine == engine and p.conversion_loader]
        if not profiles:
            continue
        rules = [r for r in dict.fromkeys(p.causality for p in reversed(profiles)) if r is not None]
        if rules:
            out[engine] = rules[0]
        if len(rules) > 1:
            out[f"{engine}-legacy"] = rules[-1]
    return out


LOADERS = _conversion_loaders()


def all_engines(spec: DraftSpec) -> dict[str, Causality | None]:
    """Each conversion loader's per-layer causality for `spec`; None where that loader does not read the
    dialect (none of them reads a GGUF file: llama.cpp does)."""
    if spec.dialect == "gguf":
        return {name: None for name in LOADERS}
    return {name: rule(spec) for name, rule in LOADERS.items()}


class UnknownEngine(UsageError, ValueError):
    """A name or version no profile covers; the message lists what exists (the CLI exits 2)."""


def by_engine(engine: str) -> tuple[Profile, ...]:
    return tuple(p for p in PROFILES if p.engine == engine)


def by_id(profile_id: str) -> Profile:
    for p in PROFILES:
        if p.id == profile_id:
            return p
    raise UnknownEngine(f"no profile {profile_id!r}")


def resolve(ref: EngineRef | str) -> Profile:
    """`vllm` -> the newest vLLM profile; `vllm@0.29.0` -> the profile whose range holds 0.29.0."""
    if isinstance(ref, str):
        try:
            ref = parse_ref(ref)
        except ValueError as e:
            raise UnknownEngine(str(e)) from None
    profiles = by_engine(ref.engine)
    if not profiles:
        raise UnknownEngine(f"unknown engine {ref.engine!r}; known: {', '.join(ENGINES)}")
    if ref.version is None:
        return profiles[-1]
    scheme = profiles[0].versions.scheme
    if scheme is None:
        raise UnknownEngine(
            f"{ref.engine} has one profile ({profiles[0].versions.label}); name it without @VERSION"
        )
    try:
        version = parse_version(ref.version, scheme)
    except ValueError as e:
        raise UnknownEngine(f"{ref}: {e}") from None
    for p in profiles:
        if p.versions.contains(version):
            return p
    ranges = ", ".join(p.versions.label for p in profiles)
    raise UnknownEngine(f"no {ref.engine} profile covers {ref.version} (profiles: {ranges})")


def newest_supporting(version: DrafterVersion | None) -> tuple[Profile, ...]:
    """The newest profile of each engine that has this DFlash version at all: what verify judges against."""
    out = []
    for engine in ENGINES:
        fit = [p for p in by_engine(engine) if version in p.drafts and p.verify_default]
        if fit:
            out.append(fit[-1])
    return tuple(out)
