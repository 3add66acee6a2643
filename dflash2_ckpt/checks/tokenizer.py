"""DF509-DF511: is the drafter made for the target's tokenizer (part of the pairing family).

With a recorded fingerprint (convert --target writes it: checkpoint/tokenizer.py) the two must be equal:
same-size vocabularies with other tokens are otherwise invisible. Without one, what can be compared is: every
id the drafter names (mask_token_id, bos / eos / pad) is a token of the target's tokenizer, and the tokenizer's
ids fit the drafter's vocab_size (DF501, built with the other DF501 in pairing.py).
"""

from __future__ import annotations

import json
from typing import Any

from ..checkpoint import Checkpoint
from ..checkpoint.tokenizer import TOKENIZER_KEY, Vocabulary, read_vocabulary, recorded
from ..errors import SourceError
from ..findings import Finding
from ..formats.gguf_names import KEY_TOKENIZER_SHA256
from ..sources import Source

EMITS: frozenset[str] = frozenset({"DF509", "DF510", "DF511", "DF520"})
_SPECIAL = ("bos_token_id", "eos_token_id", "pad_token_id")


def recorded_fingerprint(ckpt: Checkpoint) -> tuple[str, str] | None:
    """(fingerprint, where it is recorded) of a drafter that records its target's tokenizer."""
    if ckpt.gguf is not None:
        kv = ckpt.gguf.kv.get(KEY_TOKENIZER_SHA256)
        value = recorded(kv.value if kv is not None else None)
        return None if value is None else (value, KEY_TOKENIZER_SHA256)
    value = recorded((ckpt.config or {}).get(TOKENIZER_KEY))
    return None if value is None else (value, TOKENIZER_KEY)


def malformed_record(ckpt: Checkpoint) -> list[Finding]:
    """DF520: a fingerprint key that is there but holds no v1 digest. It is judged with or without a target:
    a record nothing can match must never read as "no record" and switch the comparison off unseen."""
    if ckpt.gguf is not None:
        kv = ckpt.gguf.kv.get(KEY_TOKENIZER_SHA256)
        key, present, value = KEY_TOKENIZER_SHA256, kv is not None, (kv.value if kv is not None else None)
    else:
        cfg = ckpt.config or {}
        key, present, value = TOKENIZER_KEY, TOKENIZER_KEY in cfg, cfg.get(TOKENIZER_KEY)
    if not present or recorded(value) is not None:
        return []
    shown = json.dumps(value, ensure_ascii=True, default=str)
    shown = shown if len(shown) <= 80 else shown[:77] + "..."
    return [
        Finding(
            "DF520",
            f"{key} = {shown} is not a tokenizer fingerprint (v1: 64 lower-case hex digits, "
            "no prefix): no target's tokenizer can be compared with it; re-convert with --target "
            "TARGET to record it, or remove the key",
            field=key,
            details={"recorded": shown},
        )
    ]


def _ids(value: Any) -> list[int]:
    values = value if isinstance(value, list) else [value]
    return [v for v in values if isinstance(v, int) and not isinstance(v, bool)]


def _special_ids(ckpt: Checkpoint) -> dict[str, list[int]]:
    """The drafter's own bos / eos / pad ids: top level, or the flat dialect's transformer_layer_config."""
    cfg = ckpt.config or {}
    inner = cfg.get("transformer_layer_config")
    out: dict[str, list[int]] = {}
    for key in _SPECIAL:
        value = cfg.get(key)
        if value is None and isinstance(inner, dict):
            value = inner.get(key)
        if _ids(value):
            out[key] = _ids(value)
    return out


def read_target_vocabulary(target: Source, label: str) -> tuple[Vocabulary | None, list[Finding]]:
    """The target's tokenizer, or None (none there, or DF511 when it does not read)."""
    try:
        return read_vocabulary(target), []
    except SourceError as e:
        return None, [
            Finding(
                "DF511", f"target {label}: {e.message}; the tokenizer is not compared", file="tokenizer.json"
            )
        ]


def tokenizer_findings(ckpt: Checkpoint, vocab: Vocabulary, label: str) -> list[Finding]:
    """DF509 against the recorded fingerprint; without one, DF510 for the ids the tokenizer has no token for."""
    spec = ckpt.spec
    if spec is None:
        return []
    record = recorded_fingerprint(ckpt)
    if record is not None:
        (digest, key), theirs = record, vocab.fingerprint()
        if digest == theirs:
            return []
        return [
            Finding(
                "DF509",
                f"the drafter was made for the tokenizer {digest[:12]}… ({key}) but the target "
                f"{label} has {theirs[:12]}… ({vocab.file}): the same ids stand for other tokens",
                field=key,
                details={"recorded": digest, "target": theirs},
            )
        ]
    out: list[Finding] = []
    named = {spec.path("mask_token_id"): [spec.mask_token_id]} if spec.mask_token_id is not None else {}
    named.update(_special_ids(ckpt))
    for field, ids in named.items():
        # an id past vocab_size is DF505's (against the target's config) or DF1xx's business
        missing = [i for i in ids if i not in vocab.tokens and i < spec.vocab_size]
        if missing:
            out.append(
                Finding(
                    "DF510",
                    f"{field} = {missing[0] if len(ids) == 1 else ids} but the target {label}'s "
                    f"tokenizer ({vocab.file}) has no token with id {missing[0]}: the drafter may be made "
                    "for another tokenizer",
                    field=field,
                    details={"ids": missing},
                )
            )
    return out
