"""The ordered list of check families that verify runs; findings come out in this order."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from ..findings import Finding
from . import (
    causality,
    config,
    content,
    engine_keys,
    engine_layouts,
    families,
    files,
    identity,
    pairing,
    quant,
    sidecars,
    tensors,
    vocab,
)
from .context import CheckContext

Family = Callable[[CheckContext], list[Finding]]


def _gguf(ctx: CheckContext) -> list[Finding]:
    """The GGUF family, imported only for a GGUF file: it needs the gguf package (and numpy), which a
    safetensors verify never touches (start-up time)."""
    if ctx.checkpoint.gguf is None:
        return []
    from . import gguf  # lazy: checks.gguf loads only on this path

    return gguf.check(ctx)


FAMILIES: tuple[tuple[str, Family], ...] = (
    ("config", config.check),
    ("files", files.check),
    ("identity", identity.check),
    ("tensors", tensors.check),
    ("quant", quant.check),
    ("vocab", vocab.check),
    ("causality", causality.check),
    ("engine-keys", engine_keys.check),
    ("engine-layouts", engine_layouts.check),
    ("sidecars", sidecars.check),
    ("families", families.check),
    ("pairing", pairing.check),
    ("content", content.check),
    ("gguf", _gguf),
)
# what opening a checkpoint can tell without judging it against a layout (inspect, convert's refusals)
OPENING = ("config", "files")


def run_families(ctx: CheckContext, only: Iterable[str] | None = None) -> dict[str, list[Finding]]:
    """Each family's findings under its name, in order (or only the named ones); each decides for itself
    whether it applies. What one run found serves every later reader (convert's refusals read verify's)."""
    wanted = None if only is None else set(only)
    out = {name: family(ctx) for name, family in FAMILIES if wanted is None or name in wanted}
    if ctx.checkpoint.gguf is not None:  # what the GGUF family says better about a GGUF file
        from .gguf import SUPERSEDED  # lazy: checks.gguf loads only on this path

        out = {name: [f for f in found if f.code not in SUPERSEDED] for name, found in out.items()}
    return out


def run_checks(ctx: CheckContext, only: Iterable[str] | None = None) -> list[Finding]:
    """Every family's findings in order (or only the named ones'), as one list."""
    return [f for found in run_families(ctx, only).values() for f in found]
