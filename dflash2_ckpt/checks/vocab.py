"""DF212-DF217: reduced-vocabulary DFlash v1 drafters (speculators `draft_vocab_size` < the target vocab).

Such a drafter scores with its OWN head `lm_head.weight` [draft_vocab, H] and maps its ids to the
target's with `d2t` (int64 [draft_vocab], target id = draft id + d2t[draft id]) and `t2d` (bool
[target vocab], true for the target ids the draft vocabulary keeps; exactly draft_vocab of them).
Layout and checks as speculators 0.9.0 builds and loads them (speculators/model.py: the buffers,
`load_vocab_mappings`; models/dflash/core.py: lm_head kept on save only for a reduced vocabulary, t2d /
d2t in `_keys_to_ignore_on_load_missing`, so missing maps load silently as zeros). DFlash2 forbids a
reduced vocabulary (DF111): its codebooks have one row per target token.

Header level: presence, shapes and dtypes. The map VALUES (inside the target vocabulary, consistent with
each other) are read only under `verify --scan`, like every other tensor byte: verify's contract is that
without --scan no tensor data is read, which keeps a Hub verify to its header requests.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..checkpoint import Checkpoint
from ..findings import Finding
from ..checkpoint.layout import draft_vocab
from ..sources.safetensors_header import FLOAT_DTYPES, TensorInfo
from .pairing import target_text_config

if TYPE_CHECKING:
    from .context import CheckContext

EMITS: frozenset[str] = frozenset({"DF212", "DF213", "DF214", "DF215", "DF216", "DF217"})
OWN_HEAD = "lm_head.weight"
MAP_DTYPES = {"d2t": "I64", "t2d": "BOOL"}
# the maps are one entry per token; far above any vocabulary (a few hundred thousand) yet bounded
MAX_MAP_BYTES = 64 << 20


def check(ctx: CheckContext) -> list[Finding]:
    """Header level always; the map values only under --scan, against the target's vocabulary when given."""
    ckpt = ctx.checkpoint
    if ckpt.detection is None or not ckpt.detection.is_dflash or not ckpt.tensors:
        return []
    out = vocab_findings(ckpt)
    if ctx.options.scan:
        cfg = ctx.target.config if ctx.target is not None else None
        v = target_text_config(cfg).get("vocab_size") if cfg is not None else None
        out += vocab_map_values(ckpt, v if isinstance(v, int) and not isinstance(v, bool) else None)
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
        return [Finding("DF215", f"draft_vocab_size = {dv} is larger than the target vocabulary "
                        f"transformer_layer_config.vocab_size = {V}; a reduced vocabulary is a subset of it",
                        field="draft_vocab_size", details={"draft_vocab_size": dv, "vocab_size": V})]
    out: list[Finding] = []
    head = ckpt.tensors.get(OWN_HEAD)
    if head is None:
        out.append(Finding("DF217", f"{OWN_HEAD} is missing: a drafter with draft_vocab_size = {dv} < {V} scores "
                           "with its own head over the reduced vocabulary, which nothing can rebuild from the target",
                           tensor=OWN_HEAD, details={"shape": [dv, H]}))
    elif head.shape != (dv, H) or head.dtype not in FLOAT_DTYPES:
        out.append(Finding("DF217", f"{OWN_HEAD} is {head.dtype} {list(head.shape)} but the drafter's own head is "
                           f"a float [draft_vocab_size, hidden_size] = [{dv}, {H}]", tensor=OWN_HEAD,
                           details={"found": list(head.shape), "expected": [dv, H], "dtype": head.dtype}))
    else:
        out.append(Finding("DF212", f"{OWN_HEAD} {list(head.shape)} is the drafter's own head over its reduced "
                           f"vocabulary of {dv} tokens (of the target's {V}), mapped back with d2t / t2d",
                           tensor=OWN_HEAD, details={"draft_vocab_size": dv, "vocab_size": V}))
    shapes = {"d2t": (dv,), "t2d": (V,)}
    missing = [n for n in shapes if _map(ckpt, n) is None]
    if missing:
        out.append(Finding("DF214", f"{' and '.join(missing)} missing: speculators loads missing maps silently as "
                           "zeros, so every draft id would be taken for the target id of the same number. Export "
                           "the maps the drafter was trained with", tensor=missing[0], details={"missing": missing}))
    for name, shape in shapes.items():
        t = _map(ckpt, name)
        if t is not None and (t.shape != shape or t.dtype != MAP_DTYPES[name]):
            out.append(Finding("DF213", f"{t.name} is {t.dtype} {list(t.shape)}; speculators keeps {name} as "
                               f"{MAP_DTYPES[name]} {list(shape)} ({'draft' if name == 'd2t' else 'target'} vocabulary)",
                               tensor=t.name, details={"found": [t.dtype, list(t.shape)],
                                                       "expected": [MAP_DTYPES[name], list(shape)]}))
    return out


def _read(ckpt: Checkpoint, t: TensorInfo) -> Any:
    import numpy as np
    raw = ckpt._read(t.file, t.begin, t.nbytes)
    return np.frombuffer(raw, dtype="<i8" if t.dtype == "I64" else np.uint8)


def vocab_map_values(ckpt: Checkpoint, target_vocab: int | None = None) -> list[Finding]:
    """--scan: d2t sends every draft id inside the target vocabulary, onto exactly the ids t2d marks."""
    spec, dv = ckpt.spec, draft_vocab(ckpt.spec)
    d2t, t2d = _map(ckpt, "d2t"), _map(ckpt, "t2d")
    if spec is None or dv is None or d2t is None or t2d is None or any(f.code in ("DF213", "DF215") for f in
                                                                      vocab_findings(ckpt)):
        return []
    if d2t.nbytes + t2d.nbytes > MAX_MAP_BYTES:
        return []          # shapes already bound them to the vocabularies; this only guards a lying header
    import numpy as np
    V = target_vocab or spec.vocab_size
    ids = np.arange(dv, dtype=np.int64) + _read(ckpt, d2t)
    keep = _read(ckpt, t2d) != 0
    out: list[Finding] = []
    outside = np.flatnonzero((ids < 0) | (ids >= V))
    if outside.size:
        i = int(outside[0])
        out.append(Finding("DF216", f"d2t sends {outside.size} draft id(s) outside the target vocabulary [0, {V}) "
                           f"(first: draft id {i} -> {int(ids[i])}); the verifier would index past its head",
                           tensor=d2t.name, details={"count": int(outside.size), "first_draft_id": i,
                                                     "target_vocab": V}))
        return out
    kept = int(keep.sum())
    unmarked = np.flatnonzero(~keep[ids]) if keep.size == V else np.array([], dtype=np.int64)
    if kept != dv or unmarked.size or np.unique(ids).size != dv:
        out.append(Finding("DF216", f"d2t and t2d disagree: t2d keeps {kept} target ids for draft_vocab_size = {dv}, "
                           f"{unmarked.size} draft id(s) map to ids t2d does not keep, "
                           f"{dv - int(np.unique(ids).size)} map onto an id already taken", tensor=t2d.name,
                           details={"t2d_kept": kept, "draft_vocab_size": dv, "unmarked": int(unmarked.size)}))
    return out
