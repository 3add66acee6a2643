"""The tensors a DraftSpec implies (CONTRACT §5) and byte accounting by component."""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterable, Literal

from .formats.assistant import ASSISTANT_TENSORS
from .formats.spec import DraftSpec
from .sources.safetensors_header import TensorInfo

Component = Literal["trunk", "conv", "selector", "extras"]
COMPONENTS: tuple[Component, ...] = ("trunk", "conv", "selector", "extras")


@dataclass(frozen=True)
class Expected:
    name: str
    shape: tuple[int, ...]
    component: Component


def expected_tensors(spec: DraftSpec) -> list[Expected]:
    H, I, hd = spec.hidden_size, spec.intermediate_size, spec.head_dim
    q, kv = spec.num_attention_heads * hd, spec.num_key_value_heads * hd
    out = [Expected("fc.weight", (H, spec.fc_in_features), "trunk"),
           Expected("hidden_norm.weight", (H,), "trunk"),
           Expected("norm.weight", (H,), "trunk")]
    for i in range(spec.num_hidden_layers):
        p = f"layers.{i}."
        out += [Expected(p + "input_layernorm.weight", (H,), "trunk"),
                Expected(p + "post_attention_layernorm.weight", (H,), "trunk")]
        for proj, shape in (("q_proj", (q, H)), ("k_proj", (kv, H)), ("v_proj", (kv, H)), ("o_proj", (H, q))):
            out.append(Expected(f"{p}self_attn.{proj}.weight", shape, "trunk"))
            if spec.attention_bias:
                out.append(Expected(f"{p}self_attn.{proj}.bias", (shape[0],), "trunk"))
        out += [Expected(p + "self_attn.q_norm.weight", (hd,), "trunk"),
                Expected(p + "self_attn.k_norm.weight", (hd,), "trunk"),
                Expected(p + "mlp.gate_proj.weight", (I, H), "trunk"),
                Expected(p + "mlp.up_proj.weight", (I, H), "trunk"),
                Expected(p + "mlp.down_proj.weight", (H, I), "trunk")]
        if spec.version == "v2":
            T = spec.conv_kernel_size or 0
            G = H // spec.conv_group_size if spec.conv_group_size else 0
            for mod in ("attention_conv", "mlp_conv"):
                out += [Expected(f"{p}{mod}.base_kernel", (2, T, H), "conv"),
                        Expected(f"{p}{mod}.kernel_projection.weight", (2 * T * G, H), "conv")]
    if spec.version == "v2":
        V, R = spec.vocab_size, spec.selector_rank or 0
        out += [Expected("candidate_selector.predecessor_codebook", (V, R), "selector"),
                Expected("candidate_selector.successor_codebook", (V, R), "selector"),
                Expected("candidate_selector.hidden_projection.weight", (R, H), "selector")]
    return out


_CONV = re.compile(r"^layers\.\d+\.(attention_conv|mlp_conv)\.")
_TRUNK = re.compile(r"^(fc\.|hidden_norm\.|norm\.|layers\.\d+\.(input_layernorm|post_attention_layernorm|self_attn|mlp)\.)")


# Role "alias": a stored name that another dialect uses for an expected tensor; it counts as that tensor.
ALIASES: dict[str, str] = dict(ASSISTANT_TENSORS)


def component_of(name: str) -> Component:
    """Which part of the drafter a stored tensor belongs to, by name (variants included)."""
    bare = name[len("model."):] if name.startswith("model.") else name
    bare = ALIASES.get(bare, bare)
    if _CONV.match(bare):
        return "conv"
    if bare.startswith("candidate_selector."):
        return "selector"
    if _TRUNK.match(bare):
        return "trunk"
    return "extras"


def bytes_by_component(tensors: Iterable[TensorInfo]) -> dict[Component, int]:
    out: dict[Component, int] = {c: 0 for c in COMPONENTS}
    for t in tensors:
        out[component_of(t.name)] += t.nbytes
    return out


def v2_bytes(tensors: Iterable[TensorInfo]) -> int:
    """Bytes a v1 loader would silently drop: every conv and selector tensor."""
    b = bytes_by_component(tensors)
    return b["conv"] + b["selector"]
