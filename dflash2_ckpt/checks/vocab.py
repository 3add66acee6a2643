"""DF212-DF218: reduced-vocabulary DFlash v1 drafters (speculators `draft_vocab_size` < the target vocab).

Such a drafter scores with its OWN head `lm_head.weight` [draft_vocab, H] and maps its ids to the
target's with `d2t` (int64 [draft_vocab], target id = draft id + d2t[draft id]) and `t2d` (bool
[target vocab], true for the target ids the draft vocabulary keeps; exactly draft_vocab of them).
Layout and checks as speculators 0.9.0 builds and loads them (speculators/model.py: the buffers,
`load_vocab_mappings`; models/dflash/core.py: lm_head kept on save only for a reduced vocabulary, t2d /
d2t in `_keys_to_ignore_on_load_missing`, so missing maps load silently as zeros). DFlash2 forbids a
reduced vocabulary (DF111): its codebooks have one row per target token.

Header level: presence, shapes and dtypes. d2t's values are read on every verify (DF218; one draft
vocabulary of int64, bounded by MAX_MAP_BYTES): a d2t whose target ids are not unique and inside the
target vocabulary loads and drafts the wrong tokens, in every format. HF checkpoints store OFFSETS
(target id = draft id + d2t[draft id]); a GGUF stores ABSOLUTE target ids, which llama.cpp scatters the
draft logits to (llama.cpp b11434:src/models/dflash.cpp ggml_set_rows with model.d2t; its converter
writes `data + np.arange(data.size)`, conversion/qwen.py), so HF offsets copied unchanged into a GGUF
load and draft nothing. t2d's agreement with d2t is read only under `verify --scan` (DF216), like
every other tensor byte.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..checkpoint import Checkpoint
from ..checkpoint.layout import draft_vocab
from ..findings import Finding
from ..sources.safetensors_header import FLOAT_DTYPES, TensorInfo
from .pairing import target_text_config

if TYPE_CHECKING:
    from .context import CheckContext

EMITS: frozenset[str] = frozenset({"DF212", "DF213", "DF214", "DF215", "DF216", "DF217", "DF218"})
OWN_HEAD = "lm_head.weight"
MAP_DTYPES = {"d2t": "I64", "t2d": "BOOL"}
# the maps are one entry per token; far above any vocabulary (a few hundred thousand) yet bounded
MAX_MAP_BYTES = 64 << 20


def check(ctx: CheckContext) -> list[Finding]:
    """Header level always; the map values only under --scan, against the target's vocabulary when given."""
    ckpt = ctx.checkpoint
    if ckpt.detection is None or not ckpt.detection.is_dflash or not ckpt.tensors:
        return []
    cfg = ctx.target.config if ctx.target is not None else None
    v = target_text_config(cfg).get("vocab_size") if cfg is not None else None
    target_vocab = v if isinstance(v, int) and not isinstance(v, bool) else None
    out = vocab_findings(ckpt)
    out += d2t_findings(ckpt, target_vocab)
    if ctx.options.scan:
        out += vocab_map_values(ckpt, target_vocab)
    return out


def _map(ckpt: Checkpoint, name: str) -> TensorInfo | None:
    return ckpt.tensors.get(name) or ckpt.tensors.get(name + ".weight")


def vocab_findings(ckpt: Checkpoint) -> list[Finding]:
    spec = ckpt.spec
    dv = draft_vocab(spec)
    if spec is None or dv is None:
        return []
    V, H = spec.vocab_size, spec.hidden_size
    if dv > V:
        return [
            Finding(
                "DF215",
                f"draft_vocab_size = {dv} is larger than the target vocabulary "
                f"transformer_layer_config.vocab_size = {V}; a reduced vocabulary is a subset of it",
                field="draft_vocab_size",
                details={"draft_vocab_size": dv, "vocab_size": V},
            )
        ]
    out: list[Finding] = []
    head = ckpt.tensors.get(OWN_HEAD)
    if head is None:
        out.append(
            Finding(
                "DF217",
                f"{OWN_HEAD} is missing: a drafter with draft_vocab_size = {dv} < {V} scores "
                "with its own head over the reduced vocabulary, which nothing can rebuild from the target",
                tensor=OWN_HEAD,
                details={"shape": [dv, H]},
            )
        )
    elif head.shape != (dv, H) or head.dtype not in FLOAT_DTYPES:
        out.append(
            Finding(
                "DF217",
                f"{OWN_HEAD} is {head.dtype} {list(head.shape)} but the drafter's own head is "
                f"a float [draft_vocab_size, hidden_size] = [{dv}, {H}]",
                tensor=OWN_HEAD,
                details={"found": list(head.shape), "expected": [dv, H], "dtype": head.dtype},
            )
        )
    else:
        out.append(
            Finding(
                "DF212",
                f"{OWN_HEAD} {list(head.shape)} is the drafter's own head over its reduced "
                f"vocabulary of {dv} tokens (of the target's {V}), mapped back with d2t / t2d",
                tensor=OWN_HEAD,
                details={"draft_vocab_size": dv, "vocab_size": V},
            )
        )
    shapes = {"d2t": (dv,), "t2d": (V,)}
    missing = [n for n in shapes if _map(ckpt, n) is None]
    if missing:
        out.append(
            Finding(
                "DF214",
                f"{' and '.join(missing)} missing: speculators loads missing maps silently as "
                "zeros, so every draft id would be taken for the target id of the same number. Export "
                "the maps the drafter was trained with",
                tensor=missing[0],
                details={"missing": missing},
            )
        )
    for name, shape in shapes.items():
        t = _map(ckpt, name)
        if t is not None and (t.shape != shape or t.dtype != MAP_DTYPES[name]):
            out.append(
                Finding(
                    "DF213",
                    f"{t.name} is {t.dtype} {list(t.shape)}; speculators keeps {name} as "
                    f"{MAP_DTYPES[name]} {list(shape)} ({'draft' if name == 'd2t' else 'target'} vocabulary)",
                    tensor=t.name,
                    details={"found": [t.dtype, list(t.shape)], "expected": [MAP_DTYPES[name], list(shape)]},
                )
            )
    return out


def _read(ckpt: Checkpoint, t: TensorInfo) -> Any:
    import numpy as np  # heavy: numpy loads only when this runs

    raw = ckpt.read_counted(t.file, t.begin, t.nbytes)
    return np.frombuffer(raw, dtype="<i8" if t.dtype == "I64" else np.uint8)


def vocab_map_values(ckpt: Checkpoint, target_vocab: int | None = None) -> list[Finding]:
    """--scan: d2t sends every draft id inside the target vocabulary, onto exactly the ids t2d marks."""
    spec, dv = ckpt.spec, draft_vocab(ckpt.spec)
    d2t, t2d = _map(ckpt, "d2t"), _map(ckpt, "t2d")
    if (
        spec is None
        or dv is None
        or d2t is None
        or t2d is None
        or any(f.code in ("DF213", "DF215") for f in vocab_findings(ckpt))
    ):
        return []
    if d2t.nbytes + t2d.nbytes > MAX_MAP_BYTES:
        return []  # shapes already bound them to the vocabularies; this only guards a lying header
    import numpy as np  # heavy: numpy loads only when this runs

    V = target_vocab or spec.vocab_size
    ids = np.arange(dv, dtype=np.int64) + _read(ckpt, d2t)
    keep = _read(ckpt, t2d) != 0
    out: list[Finding] = []
    if bad_target_ids(ids, V) is not None:
        return out  # DF218 says what is wrong with d2t itself
    kept = int(keep.sum())
    unmarked = np.flatnonzero(~keep[ids]) if keep.size == V else np.array([], dtype=np.int64)
    if kept != dv or unmarked.size:
        out.append(
            Finding(
                "DF216",
                f"d2t and t2d disagree: t2d keeps {kept} target ids for draft_vocab_size = {dv}, "
                f"{unmarked.size} draft id(s) map to ids t2d does not keep",
                tensor=t2d.name,
                details={"t2d_kept": kept, "draft_vocab_size": dv, "unmarked": int(unmarked.size)},
            )
        )
    return out


def bad_target_ids(ids: Any, vocab: int) -> str | None:
    """Why `ids` (one target id per draft id) cannot be a draft -> target map for a target vocabulary of
    `vocab` tokens, or None when every id is inside it and none is taken twice."""
    import numpy as np  # heavy: numpy loads only when this runs

    outside = np.flatnonzero((ids < 0) | (ids >= vocab))
    if outside.size:
        i = int(outside[0])
        return (
            f"{outside.size} draft id(s) map outside the target vocabulary [0, {vocab}) "
            f"(first: draft id {i} -> {int(ids[i])})"
        )
    taken = int(ids.size - np.unique(ids).size)
    if taken:
        return f"{taken} draft id(s) map onto a target id another draft id already has"
    return None


def d2t_findings(ckpt: Checkpoint, target_vocab: int | None = None) -> list[Finding]:
    """DF218: d2t's target ids, in the convention of the format (a GGUF holds absolute ids, an HF checkpoint
    offsets), are unique and inside the target vocabulary; names the other convention when it fits."""
    gguf = ckpt.gguf is not None
    d2t = _map(ckpt, "d2t")
    if (
        ckpt.spec is None
        or d2t is None
        or d2t.dtype != "I64"
        or len(d2t.shape) != 1
        or d2t.nbytes != 8 * d2t.shape[0]
        or d2t.nbytes > MAX_MAP_BYTES
    ):
        return []  # no map, or one DF213 already judges by its layout
    dv = draft_vocab(ckpt.spec)
    if not gguf and (dv is None or d2t.shape[0] != dv or dv > ckpt.spec.vocab_size):
        return []  # not a reduced vocabulary, or DF213 / DF215 already say why the map cannot fit
    import numpy as np  # only for a drafter with d2t: a header verify loads no numpy

    vocab = target_vocab or _gguf_vocab(ckpt) or ckpt.spec.vocab_size
    stored = _read(ckpt, d2t)
    rows = np.arange(stored.size, dtype=np.int64)
    ids, other = (stored, rows + stored) if gguf else (rows + stored, stored)
    why = bad_target_ids(ids, vocab)
    if why is None:
        return []
    if gguf:
        msg = (
            f"d2t read as absolute target ids, as llama.cpp reads it: {why}. llama.cpp scatters each draft "
            "row's logits to the id d2t holds, so the drafter loads and drafts the wrong tokens"
        )
        if bad_target_ids(other, vocab) is None:
            msg += (
                ". Read as offsets (target id - draft id, how speculators stores d2t) it is a valid map: it "
                "was copied from an HF checkpoint unchanged; store arange + d2t (`dflash2-ckpt convert "
                "--to gguf` does)"
            )
    else:
        msg = (
            f"d2t read as offsets (target id = draft id + d2t[draft id]), as speculators reads it: {why}; "
            "the drafter proposes the wrong tokens"
        )
        if bad_target_ids(other, vocab) is None:
            msg += (
                ". Read as absolute target ids it is a valid map: store d2t - arange (speculators' offsets)"
            )
    return [
        Finding(
            "DF218",
            msg,
            tensor=d2t.name,
            details={
                "format": "gguf" if gguf else "safetensors",
                "convention": "absolute" if gguf else "offsets",
                "target_vocab": vocab,
            },
        )
    ]


def _gguf_vocab(ckpt: Checkpoint) -> int | None:
    """llama.cpp's n_vocab for a GGUF drafter: the tokens it carries."""
    if ckpt.gguf is None:
        return None
    tokens = ckpt.gguf.kv.get("tokenizer.ggml.tokens")
    try:
        return len(tokens.value) if tokens is not None else None
    except TypeError:
        return None
