"""A reduced draft vocabulary (flat v1 `draft_vocab_size` < the target's) as llama.cpp b11434 loads it,
and back.

HF (speculators 0.9.0): `lm_head.weight` [draft_vocab, H] over the draft rows, `d2t` int64 [draft_vocab]
holding OFFSETS (`draft_ids + self.d2t[draft_ids]`, speculators/models/xpress/core.py) and `t2d` bool
[target vocab] marking the kept ids.
GGUF: `output.weight` {H, draft_vocab} and `d2t` I64 {draft_vocab} holding the ABSOLUTE target ids
(llama.cpp b11434:src/models/dflash.cpp: `n_vocab_draft = d2t_meta->ne[0]`, `GGML_ASSERT(model.d2t->type ==
GGML_TYPE_I64)`, the draft logits scattered to the ids with ggml_set_rows; its converter writes
`data + np.arange(data.size)` and drops t2d as "not used at runtime", conversion/qwen.py). t2d is
therefore not in the GGUF: converting back rebuilds it from d2t, which is exact because the forward
direction refuses a t2d that is not exactly the ids d2t reaches.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..checks.vocab import bad_target_ids
from ..errors import ConversionError

D2T, T2D = "d2t", "t2d"
HEAD_HF, HEAD_GGUF = "lm_head.weight", "output.weight"
_MAX_MAP_BYTES = 64 << 20  # as checks/vocab.py: a map is one entry per token


def _ints(raw: bytes, what: str) -> np.ndarray[Any, Any]:
    if len(raw) % 8 or len(raw) > _MAX_MAP_BYTES:
        raise ConversionError(f"{what} is {len(raw)} bytes, not a bounded int64 vector")
    return np.frombuffer(raw, dtype="<i8")


def absolute(offsets: bytes, t2d: bytes, vocab: int, label: str) -> bytes:
    """The GGUF d2t for an HF d2t / t2d pair; refuses maps that are not one kept id per draft row, inside
    the vocabulary and exactly the ids t2d keeps (converting back could not give them back)."""
    rel = _ints(offsets, D2T)
    ids = np.arange(rel.size, dtype=np.int64) + rel
    why = bad_target_ids(ids, vocab)
    if why is None and len(t2d) == vocab and t2d != t2d_of(ids, vocab):
        why = "t2d does not keep exactly the ids d2t reaches"
    if why is not None:
        raise ConversionError(
            f"d2t / t2d are not a draft vocabulary llama.cpp can serve: {why}",
            path=label,
            hint=f"`dflash2-ckpt verify --scan {label}` names the map findings (DF216, DF218)",
        )
    return bytes(ids.astype("<i8").tobytes())


def offsets(absolute_ids: bytes) -> bytes:
    ids = _ints(absolute_ids, D2T)
    return (ids - np.arange(ids.size, dtype=np.int64)).astype("<i8").tobytes()


def t2d_of(ids: np.ndarray[Any, Any], vocab: int) -> bytes:
    keep = np.zeros(vocab, dtype=np.uint8)
    keep[ids] = 1
    return keep.tobytes()
