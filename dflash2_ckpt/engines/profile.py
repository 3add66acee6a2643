"""What one engine release does with a drafter, as data: one Profile per engine and version range.

Every statement carries its source (`owner/repo#N`, `owner/repo:path@commit`, or a shared doc section)
so a fact can be audited and updated in one place; rule functions cover what data alone cannot say.
An engine is one module of this package that defines `PROFILES` (engines/registry.py finds it); adding a
release is an edit to that module plus a row of the golden test (docs/engines.md has the checklist).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from ..formats.spec import DraftSpec
from .versions import VersionRange

Format = Literal["nested", "flat", "gguf", "assistant"]
DrafterVersion = Literal["v1", "v2"]
Causality = tuple[bool, ...]


@dataclass(frozen=True)
class Drafter:
    """The engine-independent facts a profile judges: what was detected, the spec, the tensors and which
    modules are quantized (module path -> scheme label, e.g. {"fc": "w4a16"}; filled by header detection)."""

    dialect: str | None  # "nested" | "flat" | "gguf" | None (not a DFlash drafter)
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
    # the files beside the weights (names only), for the sidecars an engine reads or ignores (layouts.py)
    files: frozenset[str] = frozenset()

    def converted(
        self,
        dialect: str,
        spec: DraftSpec,
        config: Mapping[str, Any],
        tensors: Iterable[str],
        *,
        quantized_modules: Mapping[str, str] | None = None,
        path: str = "DRAFTER",
    ) -> Drafter:
        """The drafter a conversion of this one writes, as an engine will judge it: its version from its
        spec, this drafter's target; quantized modules only where the conversion keeps them (named, under
        their new module paths). An opened checkpoint's drafter is checkpoint.drafter.drafter_of."""
        return Drafter(
            dialect=dialect,
            version=spec.version,
            spec=spec,
            config=config,
            tensors=frozenset(tensors),
            quantized_modules=dict(quantized_modules or {}),
            path=path,
            target=self.target,
        )


@dataclass(frozen=True)
class Cite:
    """A released file and a string in it on which a fact rests (checked by tests/engines/test_released.py).

    `versions`: the releases the anchor was read in, the first and last of the range the fact covers.
    `absent`: the fact is that something is missing, so the anchor must NOT be in the file."""

    dist: str  # pip distribution: vllm, sglang, mlx-vlm, dflash, ...
    versions: tuple[str, ...]
    path: str  # file inside the wheel
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


def fact(text: str, *cites: Cite, also: str = "") -> Fact:
    """A fact resting on released code (each Cite's anchor is checked by tests/engines/test_released.py);
    `also`: a further source in words (an issue, a doc section)."""
    return Fact(text, "; ".join([str(c) for c in cites] + ([also] if also else [])), cites)


@dataclass(frozen=True)
class KeyRead:
    """A config key the schema does not model that this engine release reads (verify says DF121, not DF116).

    `key`: the config path (top level, `dflash_config.KEY`, or `transformer_layer_config.KEY` for the flat
    dialect); `since`: the first release that reads it where that is later than the engine's first profile
    (the first cite's first version); `only`: the DFlash version whose config class reads it."""

    key: str
    effect: str
    cites: tuple[Cite, ...]
    since: str = ""
    only: DrafterVersion | None = None
    checked: str = ""  # the finding that judges its value, where this toolkit does


@dataclass(frozen=True)
class TapOffset:
    """How far the layer an engine taps lies from the checkpoint's `target_layer_ids` (0-based outputs), per
    DFlash version: llama.cpp numbers layer inputs (+1). `key`: a config path whose integer value, where the
    checkpoint sets it, replaces the offset for the versions in `keyed` (a drafter may pin its own shift)."""

    v1: int = 0
    v2: int = 0
    key: str | None = None
    keyed: tuple[DrafterVersion, ...] = ("v1", "v2")
    also_key: str | None = None  # read where `key` is unset (exllamav3: a top-level tap_shift)
    # architectures whose config class declares its own offset (exllamav3's assistant export: 0)
    archs: tuple[tuple[str, int], ...] = ()

    def of(self, version: DrafterVersion | None, config: Mapping[str, Any] | None = None) -> int:
        if config is not None and version in self.keyed:
            for key in (self.key, self.also_key):
                value: Any = config if key is not None else None
                for part in (key or "").split("."):
                    value = value.get(part) if isinstance(value, Mapping) else None
                if isinstance(value, int) and not isinstance(value, bool):
                    return value
        archs = config.get("architectures") if config is not None else None
        arch = archs[0] if isinstance(archs, list) and len(archs) == 1 else None
        for name, offset in self.archs:
            if name == arch:
                return offset
        return self.v2 if version == "v2" else self.v1

    @property
    def text(self) -> str:
        """e.g. `+1 (v1, v2)`, empty where the engine taps what the checkpoint names."""
        if not (self.v1 or self.v2 or self.key):
            return ""
        by = f"{self.v1:+d} (v1, v2)" if self.v1 == self.v2 else f"{self.v1:+d} (v1), {self.v2:+d} (v2)"
        return by + (f", or {self.key} where set" if self.key else "")


@dataclass(frozen=True)
class Default:
    """A value the engine fills silently when the checkpoint gives none. `reads`: the config paths the
    engine looks at (empty: wherever the dialect puts the key); a value elsewhere counts as missing
    (mlx-vlm reads a top-level block_size only). `value` may be a function of the spec (a guess)."""

    key: str  # DraftSpec field name
    value: Any
    source: str
    reads: tuple[str, ...] = ()
    why: str = ""
    only: DrafterVersion | None = None  # the default applies to drafters of this DFlash version only


@dataclass(frozen=True)
class Refusal:
    """A hard rule: `check(drafter)` returns the engine's complaint, or None when the drafter passes."""

    name: str
    check: Callable[[Drafter], str | None]
    source: str
    code: str = "DF804"  # DF803 required key, DF804 constraint, DF805 refused tensor
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
    flag: str  # the engine's option
    count: Callable[[int], int]  # block size -> value of that option
    text: str  # e.g. "block_size - 1"
    source: str


@dataclass(frozen=True)
class ReleaseScan:
    """How `wheels check` reads a new release of an engine (an engine module's `SCAN`; release_check.py).

    registry: regexes of the files (paths in the release) that name its model architectures; names: a regex
    whose one group is a draft architecture name found there; dflash_files: a regex on paths, the files whose
    config reads are listed; reviewed_*: names and keys read there that were looked at and that no profile
    needs (targets, other draft methods, keys with no bearing on a DFlash checkpoint)."""

    registry: tuple[str, ...]
    names: str
    dflash_files: str
    reviewed_architectures: frozenset[str] = frozenset()
    reviewed_keys: frozenset[str] = frozenset()
    within: str = ""  # a regex: only its matches in a registry file are read
    # (SGLang's EntryClass statement); empty: the whole file
    key_patterns: tuple[str, ...] = ()  # further regexes, one group each, of config reads (helpers)


@dataclass(frozen=True)
class Profile:
    engine: str  # the name users type: vllm, sglang, llama.cpp, ...
    label: str  # display name
    versions: VersionRange
    drafts: frozenset[DrafterVersion]  # DFlash versions this release has at all
    reads: frozenset[Format]  # formats / dialects its loader reads
    version_by: str  # how it tells v1 from v2
    # per-layer causality: a causality.CausalRule (data, whose `.text` describes it) or, where no rule object
    # says it, a function; None: not modelled
    causality: Callable[[DraftSpec], Causality | None] | None
    taps: str  # tap-id convention, in words
    draft_tokens: DraftTokens | None
    sources: tuple[Fact, ...]  # the facts this profile rests on
    causality_text: str = ""  # empty: the rule's own text
    requires: tuple[Refusal, ...] = ()  # keys it refuses to load without
    constraints: tuple[Refusal, ...] = ()  # hard geometry / tensor rules
    defaults: tuple[Default, ...] = ()
    breakages: tuple[Breakage, ...] = ()
    quant: Callable[[Mapping[str, str]], list[QuantOutcome]] | None = None
    notes: tuple[Fact, ...] = ()  # informational: logged defaults, runner requirements
    advisories: tuple[Refusal, ...] = ()  # drafter-dependent notes: check(drafter) -> text or None
    ignores: tuple[Refusal, ...] = ()  # keys it does not read whose meaning is lost: DF815, degraded
    # drafter-dependent silent divergences (check(drafter) -> text or None): a warning of the rule's code, degraded
    divergences: tuple[Refusal, ...] = ()
    serve: Callable[[Drafter, int | None], str | None] | None = None
    # False: the release's code cannot be read (compiled), so every DFlash drafter's verdict is `unverified`
    verified: bool = True
    # whether verify judges it by default (its DF4xx causality findings): False where no config key steers what
    # the engine does, so a finding could only be fixed by serving elsewhere (compat still judges it)
    verify_default: bool = True
    read_keys: tuple[KeyRead, ...] = ()  # unmodelled config keys it reads (engines/read_keys.py)
    tap_offset: TapOffset = TapOffset()  # the layer it taps, relative to target_layer_ids
    # a conversion between the nested and flat dialects keeps what this engine builds exact (meaning check)
    conversion_loader: bool = False
    # convert's meaning check compares what this release builds from the source and from the output; False for
    # releases older than the per-layer causality rules (a conversion is judged there by compat, DF808)
    meaning_check: bool = True
    dist: str = ""  # the pip distribution its Cites read (default: `engine`)
    # (oldest, newest) release whose code was read, where no Cite can say it (engines/checked.py derives it)
    checked: tuple[str, str] | None = None
    # named drafter families it loads beyond plain DFlash v1 / v2 (e.g. "beam"): `dflash2-ckpt engines`
    families: tuple[str, ...] = ()
    architectures: tuple[str, ...] = ()  # registry names it loads as DFlash drafters (wheels check)

    def __post_init__(self) -> None:
        if not self.causality_text:
            text = getattr(self.causality, "text", None)
            object.__setattr__(self, "causality_text", text if isinstance(text, str) else "not modelled")

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
