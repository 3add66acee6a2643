"""Config keys the schema does not model that an engine release nevertheless reads, gathered from the
profiles' `read_keys` (each engine module lists what its releases read, with citations).

An unknown key listed here is reported as DF121 (read by these engines, not checked here) instead of DF116
(no engine reads it). A top-level target_layer_ids beside the required dflash_config one stays DF116, as
every reader takes dflash_config's first. MiMo's attention keys are modelled (formats/nested.py) and judged
per release (attention_keys.py). In the flat dialect vLLM's speculators mapping builds the drafter config
from transformer_layer_config plus a fixed list of top-level keys, so only the former carries a key vLLM
reads; a flat top-level key is indeed unread.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from .profile import Cite, KeyRead, Profile


@dataclass(frozen=True)
class ReadKey:
    readers: str  # the engine releases that read it, e.g. "vLLM 0.28.0 and later, SGLang"
    effect: str  # what it changes there
    cites: tuple[Cite, ...]
    checked: str = ""  # where this toolkit does check it (the finding that judges it), if it does

    @property
    def source(self) -> str:
        return "; ".join(str(c) for c in self.cites)


def _reader(label: str, read: KeyRead) -> str:
    return (
        label
        + (f" {read.since} and later" if read.since else "")
        + (f" (DFlash {read.only})" if read.only else "")
    )


def gather(profiles: tuple[Profile, ...]) -> dict[str, ReadKey]:
    """config path -> who reads it: every engine whose profiles list the path, in registry order; an engine
    whose profiles list it more than once (a later release reads more) is named by its earliest entry."""
    by_key: dict[str, dict[str, KeyRead]] = {}
    labels: dict[str, str] = {}
    for p in profiles:
        labels.setdefault(p.engine, p.label)
        for read in p.read_keys:
            by_key.setdefault(read.key, {}).setdefault(p.engine, read)
    out = {}
    for key, engines in by_key.items():
        reads = list(engines.items())
        effects = list(dict.fromkeys(r.effect for _, r in reads))
        cites = tuple(dict.fromkeys(c for _, r in reads for c in r.cites))
        checked = "; ".join(dict.fromkeys(r.checked for _, r in reads if r.checked))
        out[key] = ReadKey(
            ", ".join(_reader(labels[e], r) for e, r in reads), "; ".join(effects), cites, checked
        )
    return out


@functools.cache
def read_keys() -> dict[str, ReadKey]:
    """config path (top level, dflash_config.KEY or transformer_layer_config.KEY) -> who reads it."""
    from .registry import PROFILES  # the registry imports every module here: this one must not first

    return gather(PROFILES)


def reader_of(path: str, dialect: str | None) -> ReadKey | None:
    """Who reads this unmodelled config path of a drafter of this dialect (a flat config's top level: nobody)."""
    flat_path = path.startswith("transformer_layer_config.")
    return read_keys().get(path) if flat_path == (dialect == "flat") else None
