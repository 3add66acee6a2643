"""The target tokenizer's fingerprint that a conversion with a target records in the drafter
(checkpoint/tokenizer.py): the config key in the HF dialects, a dflash2_ckpt.* key in a GGUF."""

from __future__ import annotations

import os
from pathlib import Path

from ..checkpoint import Checkpoint
from ..checkpoint.tokenizer import TOKENIZER_KEY, tokenizer_fingerprint
from ..checks.pairing import tokenizer_pairing
from ..errors import ConversionError, SourceError
from ..sources import LocalSource


def target_fingerprint(
    ckpt: Checkpoint, target: str | os.PathLike[str] | Path | None, notes: list[str]
) -> str | None:
    """The fingerprint of the target's tokenizer (a model directory or a GGUF file), or None when it has
    none or it does not read (then a note says so). Raises ConversionError when the drafter already records
    another tokenizer, or names ids the target's tokenizer cannot hold (DF509 / DF501)."""
    if target is None:
        return None
    source = LocalSource(target)
    found = tokenizer_pairing(ckpt, source, source.label)
    bad = [f for f in found if f.severity == "error"]
    if bad:
        raise ConversionError(
            f"the drafter does not fit the target {source.label}: {bad[0].code} {bad[0].message}",
            hint="pass the target model the drafter was trained for",
        )
    try:
        digest = tokenizer_fingerprint(source)
    except SourceError as e:
        notes.append(f"no tokenizer fingerprint recorded: {e.message}")
        return None
    if digest is None:
        notes.append(f"no tokenizer fingerprint recorded: the target {source.label} has no tokenizer")
    return digest


def record_in_config(config: dict[str, object], digest: str | None, notes: list[str]) -> None:
    """The fingerprint as the config key; a recorded one is replaced only by the same value (checked above)."""
    if digest is None or config.get(TOKENIZER_KEY) == digest:
        return
    config[TOKENIZER_KEY] = digest
    # the same-dialect copy (plan.py) is otherwise unchanged
    notes[:] = [
        n.replace(
            "config.json is copied unchanged", f"config.json is copied unchanged but for {TOKENIZER_KEY}"
        )
        for n in notes
    ]
    notes.append(f"{TOKENIZER_KEY} = {digest[:12]}…: the target's tokenizer, which verify --target compares")
