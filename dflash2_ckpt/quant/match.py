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
import sys
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Callable

if sys.version_info >= (3, 11):
    from re import _constants as sre_c, _parser as sre_parse  # type: ignore[attr-defined,unused-ignore]
else:
    import sre_constants as sre_c
    import sre_parse

MAX_PATTERN = 2048        # characters of one pattern; real ones are a few dozen
MAX_NAME = 1024           # characters of a name the backtracking fallback runs on
MAX_REGEXES = 1024        # `re:` entries per config that are evaluated



@lru_cache(maxsize=1)
def _re2() -> tuple[Any, Any]:
    """RE2 and its options, loaded with the first pattern (a drafter without a quantization config has none)."""
    import re2  # type: ignore[import-untyped,unused-ignore]
    opts = re2.Options()
    opts.log_errors = False   # RE2 otherwise logs every pattern it refuses to stderr
    return re2, opts


@dataclass(frozen=True)
class Matcher:
    pattern: str                                   # without the `re:` prefix
    run: Callable[[str], bool] | None               # None: not evaluated
    why: str = ""                                  # why it is not evaluated, or when it is not
    fallback: bool = False                         # runs on Python's backtracking engine

    def match(self, name: str) -> bool | None:
        """True / False as `re.match` answers; None when this name was not evaluated."""
        if self.run is None or (self.fallback and len(name) > MAX_NAME):
            return None
        return self.run(name)


_REPEAT_OPS = (sre_c.MAX_REPEAT, sre_c.MIN_REPEAT, getattr(sre_c, "POSSESSIVE_REPEAT", None))


def _children(op: Any, av: Any) -> list[Any]:
    """The sub-patterns one parsed node holds (a repetition's body, a group's, an assertion's, each branch)."""
    if op in _REPEAT_OPS:
        return [av[2]]
    if op is sre_c.BRANCH:
        return list(av[1])
    if op is sre_c.SUBPATTERN:
        return [av[3]]
    if op in (sre_c.ASSERT, sre_c.ASSERT_NOT):
        return [av[1]]
    if op is getattr(sre_c, "ATOMIC_GROUP", None):
        return [av]
    return []


def _repeats(node: Any) -> bool:
    """Does this parsed sub-pattern contain a repetition (max > 1) or an alternation?"""
    for op, av in node:
        if (op in _REPEAT_OPS and av[1] > 1) or op is sre_c.BRANCH:
            return True
        if any(_repeats(c) for c in _children(op, av)):
            return True
    return False


def _nested(node: Any) -> bool:
    """A repetition over a sub-pattern that itself repeats or alternates: exponential backtracking."""
    for op, av in node:
        if op in _REPEAT_OPS and av[1] > 1 and _repeats(av[2]):
            return True
        if any(_nested(c) for c in _children(op, av)):
            return True
    return False


@lru_cache(maxsize=4096)
def compile_pattern(pattern: str) -> Matcher:
    """Raises re.error when Python's `re` (and so the library) refuses the pattern."""
    if len(pattern) > MAX_PATTERN:
        return Matcher(pattern, None, f"it is {len(pattern)} characters long (limit {MAX_PATTERN})")
    compiled = re.compile(pattern)                  # the library's own verdict on validity
    re2, opts = _re2()
    try:
        r = re2.compile(pattern, options=opts)
        return Matcher(pattern, lambda name: r.match(name) is not None)
    except re2.error:
        pass
    if _nested(sre_parse.parse(pattern)):
        return Matcher(pattern, None, "it nests a repetition inside a repetition and uses a construct "
                       "(lookaround or backreference) the linear-time engine lacks, so Python's re may "
                       "take exponential time on it")
    return Matcher(pattern, lambda name: compiled.match(name) is not None,
                   f"names over {MAX_NAME} characters are not evaluated", fallback=True)
