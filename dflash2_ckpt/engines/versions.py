"""Engine versions and `engine@version` references.

vLLM, SGLang and speculators number releases `MAJOR.MINOR.PATCH`; llama.cpp numbers builds `bNNNNN`.
A version is a tuple of ints compared element-wise after padding with zeros, so `0.29` == `0.29.0`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

Scheme = Literal["release", "build"]
VersionTuple = tuple[int, ...]

_RELEASE = re.compile(r"v?(\d+(?:\.\d+){0,3})(?:[.+-].*)?")
_BUILD = re.compile(r"b(\d+)")


def parse_version(text: str, scheme: Scheme) -> VersionTuple:
    """`0.29.0` / `v0.5.19` / `0.29.0rc1` (release) or `b10700` (build); ValueError when it is neither."""
    text = text.strip()
    if scheme == "build":
        m = _BUILD.fullmatch(text)
        if not m:
            raise ValueError(f"{text!r} is not a llama.cpp build number (write it as b10700)")
        return (int(m.group(1)),)
    m = _RELEASE.fullmatch(text)
    if not m:
        raise ValueError(f"{text!r} is not a release number (write it as 0.29.0)")
    return tuple(int(p) for p in m.group(1).split("."))


def _pad(v: VersionTuple, n: int) -> VersionTuple:
    return v + (0,) * (n - len(v))


def compare(a: VersionTuple, b: VersionTuple) -> int:
    n = max(len(a), len(b))
    pa, pb = _pad(a, n), _pad(b, n)
    return (pa > pb) - (pa < pb)


def show(v: VersionTuple, scheme: Scheme) -> str:
    return f"b{v[0]}" if scheme == "build" else ".".join(map(str, v))


@dataclass(frozen=True)
class VersionRange:
    """[low, high): None on either side is unbounded. `exact` marks a one-release range (==X)."""

    scheme: Scheme | None = None  # None: the engine has one profile and no version numbers
    low: VersionTuple | None = None
    high: VersionTuple | None = None
    exact: VersionTuple | None = None
    text: str = ""  # how the range is written when there is no number to show

    def contains(self, v: VersionTuple) -> bool:
        if self.exact is not None:
            return compare(v, self.exact) == 0
        if self.low is not None and compare(v, self.low) < 0:
            return False
        return self.high is None or compare(v, self.high) < 0

    @property
    def label(self) -> str:
        if self.scheme is None:
            return self.text
        if self.exact is not None:
            return "==" + show(self.exact, self.scheme)
        parts = []
        if self.low is not None:
            parts.append(">=" + show(self.low, self.scheme))
        if self.high is not None:
            parts.append("<" + show(self.high, self.scheme))
        return ",".join(parts) or "any"


def below(high: str, scheme: Scheme) -> VersionRange:
    return VersionRange(scheme, high=parse_version(high, scheme))


def at_least(low: str, scheme: Scheme) -> VersionRange:
    return VersionRange(scheme, low=parse_version(low, scheme))


def exactly(v: str, scheme: Scheme) -> VersionRange:
    return VersionRange(scheme, exact=parse_version(v, scheme))


def between(low: str, high: str, scheme: Scheme) -> VersionRange:
    return VersionRange(scheme, low=parse_version(low, scheme), high=parse_version(high, scheme))


def unversioned(text: str) -> VersionRange:
    return VersionRange(None, text=text)


@dataclass(frozen=True)
class EngineRef:
    """What a user names on the command line: `vllm`, `vllm@0.29.0`, `llama.cpp@b10700`."""

    engine: str
    version: str | None = None

    def __str__(self) -> str:
        return self.engine if self.version is None else f"{self.engine}@{self.version}"


def parse_ref(text: str) -> EngineRef:
    name, sep, version = text.strip().partition("@")
    if not name or (sep and not version):
        raise ValueError(
            f"{text!r}: name an engine as NAME or NAME@VERSION (e.g. vllm@0.29.0, llama.cpp@b10700)"
        )
    return EngineRef(name.lower(), version or None)
