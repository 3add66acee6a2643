"""Engine profiles: what each engine release does with a drafter, as data with sources (docs/engines.md)."""

from __future__ import annotations

from .profile import Drafter, Fact, Profile
from .registry import ENGINES, PROFILES, UnknownEngine, by_engine, by_id, newest_supporting, resolve
from .versions import EngineRef, parse_ref

__all__ = [
    "Drafter",
    "ENGINES",
    "EngineRef",
    "Fact",
    "PROFILES",
    "Profile",
    "UnknownEngine",
    "by_engine",
    "by_id",
    "newest_supporting",
    "parse_ref",
    "resolve",
]
