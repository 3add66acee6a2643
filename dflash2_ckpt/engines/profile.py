"""What one engine release does with a drafter, as data: one Profile per engine and version range.

Every statement carries its source (`owner/repo#N`, `owner/repo:path@commit`, or a shared doc section)
so a fact can be audited and updated in one place; rule functions cover what data alone cannot say.
Adding a release is an edit to a profile module plus a row of the golden test.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Literal, Mapping

from ..formats.spec import DraftSpec
from .versions import VersionRange

Format = Literal["nested", "flat", "gguf", "assistant"]
DrafterVersion = Literal["v1", "v2"]
Causality = tuple[bool, ...]


@dataclass(frozen=True)
class Drafter:
    """The engine-independent facts a profile judges: what was detected, the spec, the tensors and which
    modules are quantized (module path -> scheme label, e.g. {"fc": "w4a16"}; filled by header detection)."""

    dialect: str | None                  # "nested" | "flat" | "gguf" | None (not a DFlash drafter)
    version: DrafterVersion | None
    spec: DraftSpec | None = None
    config: Mapping[str, Any] = field(default_factory=dict)
    tensors: frozenset[str] = frozenset()
    quantized_modules: Mapping[str, str] = field(default_factory=dict)
    path: str = "DRAFTER"
    target: str | None = None
    # stored tensors verify reports as not part of the drafter the config describes (DF202, not an alias):
    # whether an engine skips them or refuses to load is the engine's (vllm.UNKNOWN_TENSORS)
    unexpected: frozenset[str] = frozenset()


@dataclass(frozen=True)
class Cite:
    """A released file and a string in it on which a fact rests (checked by tests/engines/test_released.py).

    `versions`: the releases the anchor was read in, the first and last of the range the fact covers.
    `absent`: the fact is that something is missing, so the anchor must NOT be in the file."""

    dist: str                                    # pip distribution: vllm, sglang, mlx-vlm, dflash, ...
    versions: tuple[str, ...]
    path: str                                    # file inside the wheel
    anchor: str
    absent: bool = False

    def __str__(self) -> str:
        span = self.versions[0] if len(self.versions) == 1 else f"{self.versions[0]}..{self.versions[-1]}"
        short = self.anchor.strip().splitlines()[0].strip()
        return f"{self.dist}=={span}:{self.path} {'lacks' if self.absent else 'has'} `{short}`"


@dataclass(frozen=True)
class Fact:
    text: str
    source: str
    cites: tuple[Cite, ...] = ()


@dataclass(frozen=True)
class Default:
    """A value the engine fills silently when the checkpoint gives none. `reads`: the config paths the
    engine looks at (empty: wherever the dialect puts the key); a value elsewhere counts as missing
    (mlx-vlm reads a top-level block_size only). `value` may be a function of the spec (a guess)."""

    key: str                                    # DraftSpec field name
    value: Any
    source: str
    reads: tuple[str, ...] = ()
    why: str = ""
    only: DrafterVersion | None = None          # the default applies to drafters of this DFlash version only


@dataclass(frozen=True)
class Refusal:
    """A hard rule: `check(drafter)` returns the engine's complaint, or None when the drafter passes."""

    name: str
    check: Callable[[Drafter], str | None]
    source: str
    code: str = "DF804"                          # DF803 required key, DF804 constraint, DF805 refused tensor
    # the dialect `convert --to` writes without what is refused (compat advises the command; the advice layer,
    # convert/advice.py, keeps it only where the converted drafter then loads); None: no conversion fixes it
    convert_to: Callable[[Drafter], str | None] | None = None


@dataclass(frozen=True)
class Breakage:
    """A bug of this release that no checkpoint can fix: every drafter of `versions` fails with `error`."""

    versions: frozenset[DrafterVersion]
    error: str
    source: str


@dataclass(frozen=True)
class QuantOutcome:
    module: str
    scheme: str
    effect: Literal["fails", "dropped", "dense-required", "degraded"]
    message: str
    source: str


@dataclass(frozen=True)
class DraftTokens:
    flag: str                                    # the engine's option
    count: Callable[[int], int]                  # block size -> value of that option
    text: str                                    # e.g. "block_size - 1"
    source: str


@dataclass(frozen=True)
class Profile:
    engine: str                                  # the name users type: vllm, sglang, llama.cpp, ...
    label: str                                   # display name
    versions: VersionRange
    drafts: frozenset[DrafterVersion]            # DFlash versions this release has at all
    reads: frozenset[Format]                     # formats / dialects its loader reads
    version_by: str                              # how it tells v1 from v2
    causality: Callable[[DraftSpec], Causality | None] | None   # None: not modelled
    causality_text: str
    taps: str                                    # tap-id convention
    draft_tokens: DraftTokens | None
    sources: tuple[Fact, ...]                    # the facts this profile rests on
    requires: tuple[Refusal, ...] = ()           # keys it refuses to load without
    constraints: tuple[Refusal, ...] = ()        # hard geometry / tensor rules
    defaults: tuple[Default, ...] = ()
    breakages: tuple[Breakage, ...] = ()
    quant: Callable[[Mapping[str, str]], list[QuantOutcome]] | None = None
    notes: tuple[Fact, ...] = ()                 # informational: logged defaults, runner requirements
    advisories: tuple[Refusal, ...] = ()         # drafter-dependent notes: check(drafter) -> text or None
    ignores: tuple[Refusal, ...] = ()            # keys it does not read whose meaning is lost: DF815, degraded
    # drafter-dependent silent divergences (check(drafter) -> text or None): a warning of the rule's code, degraded
    divergences: tuple[Refusal, ...] = ()
    serve: Callable[["Drafter", int | None], str | None] | None = None
    # how many layers deeper than the checkpoint's target_layer_ids (the output of layer i, as vLLM, SGLang and
    # the z-lab reference read them) this release taps; None: the ids as written
    tap_shift: Callable[["Drafter"], int] | None = None
    # False: the release's code cannot be read (compiled), so every DFlash drafter's verdict is `unverified`
    verified: bool = True
    # whether verify judges it by default (its DF4xx causality findings): False where no config key steers what
    # the engine does, so a finding could only be fixed by serving elsewhere (compat still judges it)
    verify_default: bool = True

    @property
    def id(self) -> str:
        label = self.versions.label
        if self.versions.scheme is None:
            return self.engine
        return f"{self.engine}{label}" if label[0] in "<>=" else f"{self.engine}@{label}"

    @property
    def title(self) -> str:
        return f"{self.label} {self.versions.label}".strip()


def listed(names: list[str], at_most: int) -> str:
    """`a, b, c and N more`: the first names of a list a refusal quotes."""
    more = len(names) - at_most
    return ", ".join(names[:at_most]) + (f" and {more} more" if more > 0 else "")
