"""diff on configs: the meaning check of conversions (engines/meaning.py) between the reference's config and
the derived one's, so a quantizer or re-export that rewrote the config (dropped is_causal, moved the taps)
is caught even when every tensor matches. Tensors are diff's own business; only the configs are compared."""

from __future__ import annotations

import os
from typing import Any

from ..checkpoint import Checkpoint, open_checkpoint
from ..checkpoint.drafter import drafter_of
from ..engines import PROFILES, Drafter
from ..engines.meaning import compare
from ..errors import Dflash2Error
from ..findings import Finding
from ..sources import Source

EMITS: frozenset[str] = frozenset({"DF235"})


def _drafter(ckpt: Checkpoint) -> Drafter | None:
    det = ckpt.detection
    if ckpt.spec is None or det is None:
        return None
    # the config's meaning only: diff measures what quantization does to the numbers itself, so neither
    # side's quantized modules are judged here (and no target is paired)
    return drafter_of(ckpt, quantized_modules={})


def config_meaning(
    derived: str | os.PathLike[str] | Source, reference: str | os.PathLike[str] | Source
) -> dict[str, Any] | None:
    """The per-engine comparison, as JSON; None when either side has no DFlash config to read."""
    try:
        a, b = _drafter(open_checkpoint(reference)), _drafter(open_checkpoint(derived))
    except Dflash2Error:
        return None
    if a is None or b is None:
        return None
    return compare(a, b, tuple(p for p in PROFILES if p.meaning_check), names=lambda d: ()).to_json()


def meaning_findings(doc: dict[str, Any] | None) -> list[Finding]:
    out = []
    for row in (doc or {}).get("engines", ()):
        changed = [c for c in row["changes"] if c["kind"] == "changed"]
        if changed:
            what = "; ".join(f"{c['field']} {c['source']!r} -> {c['output']!r}" for c in changed)
            who = "the configs' own readers" if row["engine"] == "meaning" else row["engine"]
            out.append(
                Finding(
                    "DF235",
                    f"{who} build(s) another drafter from the derived config than from the "
                    f"reference's: {what}",
                    field="config.json",
                    details={"engine": row["engine"], "changes": changed},
                )
            )
    return out
