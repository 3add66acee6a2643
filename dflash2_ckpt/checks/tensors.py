"""DF2xx: the stored tensors against the layout the config implies (CONTRACT §5)."""
from __future__ import annotations

import re

from ..checkpoint import Checkpoint
from ..findings import Finding
from ..layout import Expected, component_of, expected_tensors
from ..quant.view import build_view
from ..sources.safetensors_header import FLOAT_DTYPES, TensorInfo

# stored name -> the name engines load, for variants seen in the wild
_ENCODER_NAMES = {"encoder.fc.weight": "fc.weight", "encoder.output_norm_enc.weight": "hidden_norm.weight"}
_CODEBOOK_SUFFIX = re.compile(r"^(candidate_selector\.(?:predecessor|successor)_codebook)\.weight$")
_TARGET_COPIES = {"embed_tokens.weight", "lm_head.weight", "model.embed_tokens.weight", "model.lm_head.weight"}
_VOCAB_MAPS = {"t2d", "d2t", "t2d.weight", "d2t.weight"}
_CONFIG_DTYPES = {"bfloat16": "BF16", "float16": "F16", "float32": "F32", "float64": "F64"}


def canonical_name(name: str) -> tuple[str, str | None]:
    """(name the engines load, finding code of the variant or None)."""
    if name in _ENCODER_NAMES:
        return _ENCODER_NAMES[name], "DF208"
    m = _CODEBOOK_SUFFIX.match(name)
    if m:
        return m.group(1), "DF206"
    return name, None


def check_tensors(ckpt: Checkpoint, skip_components: frozenset[str] = frozenset()) -> list[Finding]:
    """skip_components: components whose absence/presence the identity check already reported wholesale."""
    out: list[Finding] = []
    # quantized modules appear once, with their dense name and logical shape (checks/quant.py judges them)
    view = build_view(ckpt)
    stored = view.logical
    expected: dict[str, Expected] = {e.name: e for e in expected_tensors(ckpt.spec)} if ckpt.spec else {}
    provided: dict[str, TensorInfo] = {}
    for name, t in stored.items():
        canon, variant = canonical_name(name)
        if variant == "DF206":
            out.append(Finding("DF206", f"{name} should be named {canon}: vLLM loads only the bare codebook name "
                               "and leaves the selector uninitialised otherwise. `dflash2-ckpt convert` renames it",
                               tensor=name, details={"rename_to": canon}))
        elif variant == "DF208":
            out.append(Finding("DF208", f"{name} is the assistant-export name of {canon}; the engines load {canon}",
                               tensor=name, details={"rename_to": canon}))
        if name in _TARGET_COPIES:
            out.append(Finding("DF207", f"{name} ({t.nbytes:,} B) is a copy of the target's; engines use the "
                               "target's own and ignore it", tensor=name, details={"bytes": t.nbytes}))
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

    # a module stored quantized without a usable scheme (DF227 / DF229) still stands in for its weight
    stand_ins = {m.weight for m in view.modules.values()}
    for e in expected.values():
        if e.component in skip_components or e.name in ckpt.unavailable or (e.name in stand_ins and e.name not in provided):
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

    weights = [t for n, t in stored.items() if n not in _VOCAB_MAPS and n not in stand_ins]
    for t in weights:
        if t.dtype not in FLOAT_DTYPES:
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
