"""compressed-tensors' `re:` patterns, matched in bounded time.

The library matches `re:` targets and ignore entries with Python's `re.match`, which backtracks: a
pattern such as `([a-z.]|[a-z.])*!` takes exponential time on an ordinary module name, and a
drafter from the Hub is untrusted input that `audit` reads unattended. So:

- a pattern RE2 accepts (no lookaround, no backreference) runs on RE2, which is linear in the name
  and gives the same answer as `re.match` on the ASCII module names drafters have;
- a pattern only Python's `re` accepts runs there when it has no repetition over a repetition or an
  alternation (the shapes that backtrack exponentially), on names of at most MAX_NAME characters;
- anything else is not evaluated: it matches nothing, and `unevaluated` says why, so the caller
  reports it (DF234) instead of hanging.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

MAX_PATTERN = 2048  # characters of one pattern; real ones are a few dozen
MAX_NAME = 1024  # characters of a name the backtracking fallback runs on
MAX_REGEXES = 1024  # `re:` entries per config that are evaluated


@lru_cache(maxsize=1)
def _re2() -> tuple[Any, Any]:
    """RE2 and its options, loaded with the first pattern (a drafter without a quantization config has none)."""
    import re2  # type: ignore[import-untyped,unused-ignore]

    opts = re2.Options()
    opts.log_errors = False  # RE2 otherwise logs every pattern it refuses to stderr
    return re2, opts


@dataclass(frozen=True)
class Matcher:
    pattern: str  # without the `re:` prefix
    run: Callable[[str], bool] | None  # None: not evaluated
    why: str = ""  # why it is not evaluated, or when it is not
    fallback: bool = False  # runs on Python's backtracking engine

    def match(self, name: str) -> bool | None:
        """True / False as `re.match` answers; None when this name was not evaluated."""
        if self.run is None or (self.fallback and len(name) > MAX_NAME):
            return None
        return self.run(name)


# a quantifier that lets its atom repeat more than once: *, +, {n,}, {n,m} with m > 1 (a lazy or possessive
# suffix changes nothing here); `?` and {0,1} / {1} do not
_QUANT = re.compile(r"\*|\+|\{(\d*)(,(\d*))?\}")


def _repeats_at(pattern: str, i: int) -> tuple[bool, int]:
    """Whether a quantifier that repeats starts at `i`, and where the pattern goes on after it."""
    m = _QUANT.match(pattern, i)
    if m is None:
        return False, i + (pattern.startswith("?", i))
    if m.group(0) in ("*", "+"):
        return True, m.end()
    low, comma, high = m.group(1), m.group(2), m.group(3)
    most = (int(high) if high else None) if comma else (int(low) if low else 0)
    return most is None or most > 1, m.end()


def nests_repetition(pattern: str) -> bool:
    """A repetition over a group that itself repeats or alternates: exponential backtracking. Read from
    the pattern's text (character classes and escapes skipped), erring towards True: a pattern said
    nested is not evaluated (and reported), never run on the backtracking engine."""
    inner = [False]  # per open group (the outermost: the pattern): repeats or alternates
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if c == "\\":
            i += 2
            grouped = False
        elif c == "[":
            i += 1 + (pattern.startswith("^", i + 1))
            i += pattern.startswith("]", i)
            while i < n and pattern[i] != "]":
                i += 2 if pattern[i] == "\\" else 1
            i += 1
            grouped = False
        elif c == "(":
            inner.append(False)
            i += 1
            continue
        elif c == ")" and len(inner) > 1:
            group = inner.pop()
            inner[-1] |= group
            i += 1
            grouped = group
        elif c == "|":
            inner[-1] = True
            i += 1
            continue
        else:
            i += 1
            grouped = False
        repeats, i = _repeats_at(pattern, i)
        if repeats and grouped:
            return True
        inner[-1] |= repeats
    return False


@lru_cache(maxsize=4096)
def compile_pattern(pattern: str) -> Matcher:
    """Raises re.error when Python's `re` (and so the library) refuses the pattern."""
    if len(pattern) > MAX_PATTERN:
        return Matcher(pattern, None, f"it is {len(pattern)} characters long (limit {MAX_PATTERN})")
    compiled = re.compile(pattern)  # the library's own verdict on validity
    re2, opts = _re2()
    try:
        r = re2.compile(pattern, options=opts)
        return Matcher(pattern, lambda name: r.match(name) is not None)
    except re2.error:
        pass
    if nests_repetition(pattern):
        return Matcher(
            pattern,
            None,
            "it nests a repetition inside a repetition and uses a construct "
            "(lookaround or backreference) the linear-time engine lacks, so Python's re may "
            "take exponential time on it",
        )
    return Matcher(
        pattern,
        lambda name: compiled.match(name) is not None,
        f"names over {MAX_NAME} characters are not evaluated",
        fallback=True,
    )
