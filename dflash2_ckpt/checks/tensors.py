"""DF2xx: the stored tensors against the layout the config implies (docs/contract.md#tensors)."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from ..checkpoint import Checkpoint
from ..checkpoint.family_layout import known_part
from ..checkpoint.layout import OWN_VOCAB_RULES, Expected, TensorRole, expected_tensors, role_for, role_of
from ..findings import Finding
from ..sources.safetensors_header import FLOAT_DTYPES, TensorInfo
from .identity import covered

if TYPE_CHECKING:
    from .context import CheckContext

EMITS: frozenset[str] = frozenset(
    {"DF201", "DF202", "DF203", "DF204", "DF205", "DF206", "DF207", "DF208", "DF210", "DF211"}
)  # quantized modules: checks/quant.py (DF209 retired)
_CONFIG_DTYPES = {"bfloat16": "BF16", "float16": "F16", "float32": "F32", "float64": "F64"}


def _role_finding(t: TensorInfo, r: TensorRole) -> Finding | None:
    """The per-tensor finding the role table names for a stored tensor."""
    name = t.name
    if r.rule.code == "DF206":
        return Finding(
            "DF206",
            f"{name} should be named {r.canonical}: vLLM loads only the bare codebook name "
            "and leaves the selector uninitialised otherwise. `dflash2-ckpt convert` renames it",
            tensor=name,
            details={"rename_to": r.canonical},
        )
    if r.rule.code == "DF208":
        return Finding(
            "DF208",
            f"{name} is the assistant-export name of {r.canonical}; the engines load {r.canonical}",
            tensor=name,
            details={"rename_to": r.canonical},
        )
    if r.role == "alias":
        return Finding(
            "DF202",
            f"{name} is not a name the engines load; they read {r.canonical} "
            "(`dflash2-ckpt convert` renames it)",
            tensor=name,
            details={"bytes": t.nbytes, "rename_to": r.canonical},
        )
    if r.role == "target-copy":
        if r.rule.copies == "embed_tokens":
            # vllm==0.27.1..0.34.0 qwen3_dflash.py load_weights: a shipped embed_tokens is loaded into the
            # drafter's own table (includes_embed_tokens) and drafts with it; without one it shares the target's
            return Finding(
                "DF207",
                f"{name} ({t.nbytes:,} B) is a copy of the target's embed_tokens: vLLM loads "
                "a shipped copy and drafts with it instead of the target's (other engines use the "
                "target's), so it must equal the target's table; drop it to share the target's",
                tensor=name,
                details={
                    "bytes": t.nbytes,
                    "source": "vllm==0.27.1..0.34.0:vllm/model_executor/models/"
                    "qwen3_dflash.py has `includes_embed_tokens = True`",
                },
            )
        return Finding(
            "DF207",
            f"{name} ({t.nbytes:,} B) is a copy of the target's {r.rule.copies}; engines use "
            "the target's own and ignore it",
            tensor=name,
            details={"bytes": t.nbytes},
        )
    if r.role == "vocab-map":
        return Finding(
            "DF210",
            f"{name} is a vocabulary map; DFlash2 drafts over the full target "
            "vocabulary and no engine reads it",
            tensor=name,
        )
    return None


# MiMo-style attention sinks: one learned bias per attention head, which vLLM's DFlash builds when
# dflash_config.attention_sink_bias is true (the MiMo attention's `attention_sink_bias` parameter)
_SINK = re.compile(r"layers\.\d+\.self_attn\.(?:attention_sink_bias|sinks)")


def declared_sink(spec: Any, name: str, t: TensorInfo) -> bool:
    """A sink tensor the config declares (attention_sink_bias: true), one value per head: not unexpected."""
    return (
        spec is not None
        and spec.drafter_extra.get("attention_sink_bias") is True
        and _SINK.fullmatch(name) is not None
        and tuple(t.shape) == (spec.num_attention_heads,)
    )


def check(ctx: CheckContext) -> list[Finding]:
    """Only for a DFlash drafter whose headers were read (DF304 / DF60x report the other cases)."""
    ckpt = ctx.checkpoint
    if ckpt.detection is None or not ckpt.detection.is_dflash or not ckpt.tensors:
        return []
    return check_tensors(ckpt, covered(ckpt))


def check_tensors(ckpt: Checkpoint, skip_components: frozenset[str] = frozenset()) -> list[Finding]:
    """skip_components: components whose absence/presence the identity check already reported wholesale."""
    out: list[Finding] = []
    # quantized modules appear once, with their dense name and logical shape (checks/quant.py judges them)
    view = ckpt.quant
    stored = view.logical
    expected: dict[str, Expected] = {e.name: e for e in expected_tensors(ckpt.spec)} if ckpt.spec else {}
    provided: dict[str, TensorInfo] = {}
    assistant = ckpt.detection is not None and ckpt.detection.dialect == "assistant"
    for name, t in stored.items():
        r = role_for(name, ckpt.spec)
        if r.rule in OWN_VOCAB_RULES:
            continue  # a reduced-vocabulary drafter's own head and maps: checks/vocab.py
        found = _role_finding(t, r)
        if found is not None and found.code == "DF208" and assistant:
            found = None  # the dialect's own names; DF305 says which engines load them
        # an alias of nothing the config describes (model.layers.9.* in a 2-layer drafter): renaming would
        # not make it load, so it is reported below as unexpected like any other stray tensor
        stray_alias = (
            found is not None
            and found.code == "DF202"
            and bool(expected)
            and r.canonical not in expected
            and r.component not in skip_components
            and not declared_sink(ckpt.spec, r.canonical, t)
        )
        if stray_alias:
            found = None
        if found is not None:
            out.append(found)
        if r.rule.fate == "drop":
            continue
        provided[r.canonical] = t
        said = found is not None and found.code == "DF202"  # an alias already said so
        if declared_sink(ckpt.spec, r.canonical, t) or known_part(ckpt.spec, name):
            continue
        if r.canonical not in expected and expected and not said and r.component not in skip_components:
            prefix = f", with or without its prefix ({r.canonical})" if stray_alias else ""
            out.append(
                Finding(
                    "DF202",
                    f"{name} ({t.dtype} {list(t.shape)}) is not part of the drafter the "
                    f"config describes{prefix}; engines skip or reject it",
                    tensor=name,
                    details={"bytes": t.nbytes},
                )
            )

    # a module stored quantized without a usable scheme (DF227 / DF229) still stands in for its weight
    quantized = {m.weight for m in view.modules.values()}
    stand_ins = {role_of(n).canonical for n in quantized}
    for e in expected.values():
        if (
            e.component in skip_components
            or e.name in ckpt.unavailable
            or (e.name in stand_ins and e.name not in provided)
        ):
            continue
        got = provided.get(e.name)
        if got is None and e.optional:
            continue
        if got is None:
            out.append(
                Finding(
                    "DF201",
                    f"{e.name} {list(e.shape)} is missing; the engine leaves that "
                    f"{e.component} parameter uninitialised",
                    tensor=e.name,
                    details={"shape": list(e.shape), "component": e.component},
                )
            )
        elif got.shape != e.shape:
            out.append(
                Finding(
                    "DF203",
                    f"{got.name} is {list(got.shape)} but the config implies {list(e.shape)}"
                    f"{_shape_hint(e.name, ckpt)}",
                    tensor=got.name,
                    details={"found": list(got.shape), "expected": list(e.shape)},
                )
            )

    weights = [t for n, t in stored.items() if role_of(n).role != "vocab-map" and n not in quantized]
    for t in weights:
        if t.dtype not in FLOAT_DTYPES:
            out.append(
                Finding(
                    "DF204",
                    f"{t.name} is stored as {t.dtype}; drafter weights are floating point",
                    tensor=t.name,
                    details={"dtype": t.dtype},
                )
            )
    floats = sorted({t.dtype for t in weights if t.dtype in FLOAT_DTYPES})
    if len(floats) > 1:
        counts = {d: sum(t.dtype == d for t in weights) for d in floats}
        out.append(
            Finding(
                "DF205",
                f"weights are stored in {', '.join(f'{d} ({c})' for d, c in counts.items())}; "
                "engines cast everything to one dtype",
                details={"dtypes": counts},
            )
        )
    if ckpt.spec and ckpt.spec.dtype and len(floats) == 1:
        want = _CONFIG_DTYPES.get(ckpt.spec.dtype)
        if want and want != floats[0]:
            out.append(
                Finding(
                    "DF211",
                    f"config says dtype {ckpt.spec.dtype} but the tensors are {floats[0]}",
                    field=ckpt.spec.path("dtype"),
                    details={"config": ckpt.spec.dtype, "stored": floats[0]},
                )
            )
    return out


def unexpected_names(findings: Iterable[Finding]) -> frozenset[str]:
    """The tensors of the DF202 findings that are not part of the drafter at all (an alias names the part it
    stands for, `rename_to`, and is left out): what compat asks each engine's loader about."""
    return frozenset(
        f.tensor for f in findings if f.code == "DF202" and f.tensor and "rename_to" not in (f.details or {})
    )


def _shape_hint(name: str, ckpt: Checkpoint) -> str:
    spec = ckpt.spec
    if spec is None:
        return ""
    if name == "fc.weight":
        return (
            f" (= {len(spec.target_layer_ids)} taps x {spec.target_hidden_size or spec.hidden_size}); check "
            f"{spec.path('target_layer_ids')} and target_hidden_size"
        )
    if name.startswith("candidate_selector.") and "codebook" in name:
        return " (vocab_size x selector_rank)"
    if "kernel_projection" in name:
        return " (2 x conv_kernel_size x hidden_size / conv_group_size, hidden_size)"
    return ""
