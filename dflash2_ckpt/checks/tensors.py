"""DF2xx: the stored tensors against the layout the config implies (CONTRACT §5)."""
from __future__ import annotations

import re

from ..checkpoint import Checkpoint
from ..findings import Finding
from ..layout import ALIASES, Expected, component_of, expected_tensors
from ..sources.safetensors_header import FLOAT_DTYPES, TensorInfo
from .vocab import OWN_HEAD, draft_vocab

_CODEBOOK_SUFFIX = re.compile(r"^(candidate_selector\.(?:predecessor|successor)_codebook)\.weight$")
_TARGET_COPIES = {"embed_tokens.weight", "lm_head.weight", "model.embed_tokens.weight", "model.lm_head.weight"}
_QUANTIZED = re.compile(r"\.(weight_packed|weight_scale|weight_zero_point|weight_shape|qweight|qzeros|scales|g_idx|"
                        r"input_scale|weight_global_scale)$")
_QUANTIZED_MAIN = re.compile(r"\.(weight_packed|qweight)$")   # stands in for the dense `.weight`
_VOCAB_MAPS = {"t2d", "d2t", "t2d.weight", "d2t.weight"}
_CONFIG_DTYPES = {"bfloat16": "BF16", "float16": "F16", "float32": "F32", "float64": "F64"}


def canonical_name(name: str) -> tuple[str, str | None]:
    """(name the engines load, finding code of the variant or None)."""
    if name in ALIASES:
        return ALIASES[name], "DF208"
    m = _CODEBOOK_SUFFIX.match(name)
    if m:
        return m.group(1), "DF206"
    return name, None


def check_tensors(ckpt: Checkpoint, skip_components: frozenset[str] = frozenset()) -> list[Finding]:
    """skip_components: components whose absence/presence the identity check already reported wholesale."""
    out: list[Finding] = []
    stored = ckpt.tensors
    expected: dict[str, Expected] = {e.name: e for e in expected_tensors(ckpt.spec)} if ckpt.spec else {}
    provided: dict[str, TensorInfo] = {}
    quantized: list[str] = []
    own_vocab = draft_vocab(ckpt.spec) is not None
    for name, t in stored.items():
        canon, variant = canonical_name(name)
        if variant == "DF206":
            out.append(Finding("DF206", f"{name} should be named {canon}: vLLM loads only the bare codebook name "
                               "and leaves the selector uninitialised otherwise. `dflash2-ckpt convert` renames it",
                               tensor=name, details={"rename_to": canon}))
        elif variant == "DF208" and (ckpt.detection is None or ckpt.detection.dialect != "assistant"):
            out.append(Finding("DF208", f"{name} is the assistant-export name of {canon}; the engines load {canon}",
                               tensor=name, details={"rename_to": canon}))
        if own_vocab and (name == OWN_HEAD or name in _VOCAB_MAPS):
            continue    # the drafter's own head and maps: checks/vocab.py
        if name in _TARGET_COPIES:
            out.append(Finding("DF207", f"{name} ({t.nbytes:,} B) is a copy of the target's; engines use the "
                               "target's own and ignore it", tensor=name, details={"bytes": t.nbytes}))
            continue
        if _QUANTIZED.search(name):
            quantized.append(name)
            continue
        if name in _VOCAB_MAPS:
            out.append(Finding("DF210", f"{name} is a vocabulary map; DFlash2 drafts over the full target "
                               "vocabulary and no engine reads it", tensor=name))
            continue
        provided[canon] = t
        if canon not in expected and expected and component_of(canon) not in skip_components:
            out.append(Finding("DF202", f"{name} ({t.dtype} {list(t.shape)}) is not part of the drafter the "
                               "config describes; engines skip or reject it", tensor=name,
                               details={"bytes": t.nbytes}))

    if quantized:
        out.append(Finding("DF209", f"{len(quantized)} quantized tensor(s) ({', '.join(quantized[:4])}"
                           f"{', ...' if len(quantized) > 4 else ''}); the DFlash engines load a dense "
                           "(BF16/F16/F32) drafter. Publish the unquantized weights", tensor=quantized[0],
                           details={"tensors": quantized}))
    stand_ins = {_QUANTIZED_MAIN.sub(".weight", n) for n in quantized}
    for e in expected.values():
        if e.component in skip_components or e.name in stand_ins or e.name in ckpt.unavailable:
            continue
        t = provided.get(e.name)
        if t is None:
            out.append(Finding("DF201", f"{e.name} {list(e.shape)} is missing; the engine leaves that "
                               f"{e.component} parameter uninitialised", tensor=e.name,
                               details={"shape": list(e.shape), "component": e.component}))
        elif t.shape != e.shape:
            out.append(Finding("DF203", f"{t.name} is {list(t.shape)} but the config implies {list(e.shape)}"
                               f"{_shape_hint(e.name, ckpt)}", tensor=t.name,
                               details={"found": list(t.shape), "expected": list(e.shape)}))

    weights = [t for n, t in stored.items() if n not in _VOCAB_MAPS and not (own_vocab and n == OWN_HEAD)]
    for t in weights:
        if t.dtype not in FLOAT_DTYPES and not _QUANTIZED.search(t.name):
            out.append(Finding("DF204", f"{t.name} is stored as {t.dtype}; drafter weights are floating point",
                               tensor=t.name, details={"dtype": t.dtype}))
    floats = sorted({t.dtype for t in weights if t.dtype in FLOAT_DTYPES})
    if len(floats) > 1:
        counts = {d: sum(t.dtype == d for t in weights) for d in floats}
        out.append(Finding("DF205", f"weights are stored in {', '.join(f'{d} ({c})' for d, c in counts.items())}; "
                           "engines cast everything to one dtype", details={"dtypes": counts}))
    if ckpt.spec and ckpt.spec.dtype and len(floats) == 1:
        want = _CONFIG_DTYPES.get(ckpt.spec.dtype)
        if want and want != floats[0]:
            out.append(Finding("DF211", f"config says dtype {ckpt.spec.dtype} but the tensors are {floats[0]}",
                               field=ckpt.spec.path("dtype"), details={"config": ckpt.spec.dtype,
                                                                         "stored": floats[0]}))
    return out


def _shape_hint(name: str, ckpt: Checkpoint) -> str:
    spec = ckpt.spec
    if spec is None:
        return ""
    if name == "fc.weight":
        return (f" (= {len(spec.target_layer_ids)} taps x {spec.target_hidden_size or spec.hidden_size}); check "
                f"{spec.path('target_layer_ids')} and target_hidden_size")
    if name.startswith("candidate_selector.") and "codebook" in name:
        return " (vocab_size x selector_rank)"
    if "kernel_projection" in name:
        return " (2 x conv_kernel_size x hidden_size / conv_group_size, hidden_size)"
    return ""
