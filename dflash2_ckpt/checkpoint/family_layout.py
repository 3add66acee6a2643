"""The tensors a DFlash family stores beside (or instead of) the plain DFlash layout (formats/families.py).

Names and shapes from vLLM's model classes (engines/released_families.py cites them):
- XPress (qwen3_xpress.py XPressRefinerHead and its HYBRID_KEY_MAP): the DFlash v1 trunk plus
  xpress_head.{w1 [V, r], down_h / down_g [r, H], in_proj [r, 3r], mlp.gate_proj / up_proj [m, r],
  mlp.down_proj [r, m], w2 [V, r]} and the raw mixer xpress_head.mix.L [r, B, B] (optional from 0.34.0),
  r = xpress_rank (256), m = xpress_mlp_hidden (512), B = xpress_block_size or num_speculative_steps + 1 (16).
  Every head parameter is built in the model dtype, like the trunk.
- Laguna (laguna_dflash.py, laguna.py): Laguna decoder layers loaded by parameter name, so the attention
  projections are stored fused (self_attn.qkv_proj [(nq + 2 nkv) hd, H]) with a gate self_attn.g_proj
  ([nq, H] per head for gating true / "per-head", [nq hd, H] per element) and one RMSNorm per tap
  (aux_hidden_norms.K.weight [target hidden]) before fc.
- MoE DFlash2: expert MLPs replace the dense ones of some layers (layers.N.mlp.experts.*): known, not loaded
  by any released engine (checks/families.py DF240), so the dense MLP of a layer is not required.
"""

from __future__ import annotations

import re
from typing import Any

from ..formats import families as fam
from ..formats.spec import DraftSpec
from .expected import Expected

_QKV = re.compile(r"^(layers\.\d+\.self_attn\.)[qkv]_proj\.(weight|bias)$")
_DENSE_MLP = re.compile(r"^layers\.\d+\.mlp\.(?:gate|up|down)_proj\.weight$")
# a MoE layer's router and shared expert, beside its experts
_MOE_PARTS = re.compile(
    r"^(?:model\.)?layers\.\d+\.(?:mlp|block_sparse_moe)\.(?:experts\.|gate\.|router\.|"
    r"shared_expert(?:_gate)?\.)"
)


def _int(spec: DraftSpec, key: str, default: int) -> int:
    v = spec.transformer_extra.get(key, spec.drafter_extra.get(key))
    return v if isinstance(v, int) and not isinstance(v, bool) and v > 0 else default


def xpress_head(spec: DraftSpec) -> list[Expected]:
    H, V = spec.hidden_size, spec.vocab_size
    r, m = _int(spec, "xpress_rank", 256), _int(spec, "xpress_mlp_hidden", 512)
    B = _int(spec, "xpress_block_size", _int(spec, "num_speculative_steps", 15) + 1)
    p = "xpress_head."
    return [
        Expected(p + "w1.weight", (V, r), "extras"),
        Expected(p + "down_h.weight", (r, H), "extras"),
        Expected(p + "down_g.weight", (r, H), "extras"),
        Expected(p + "in_proj.weight", (r, 3 * r), "extras"),
        Expected(p + "mlp.gate_proj.weight", (m, r), "extras"),
        Expected(p + "mlp.up_proj.weight", (m, r), "extras"),
        Expected(p + "mlp.down_proj.weight", (r, m), "extras"),
        Expected(p + "w2.weight", (V, r), "extras"),
        Expected(p + "mix.L", (r, B, B), "extras", optional=True),
    ]


def _gate_rows(spec: DraftSpec) -> int | None:
    gating: Any = spec.transformer_extra.get("gating")
    if gating is True or gating == "per-head":
        return spec.num_attention_heads
    if gating:  # "per-element"
        return spec.num_attention_heads * spec.head_dim
    return None


def laguna(spec: DraftSpec, base: list[Expected]) -> list[Expected]:
    H, hd = spec.hidden_size, spec.head_dim
    rows = (spec.num_attention_heads + 2 * spec.num_key_value_heads) * hd
    gate = _gate_rows(spec)
    out: list[Expected] = []
    for e in base:
        m = _QKV.match(e.name)
        if m is None:
            out.append(e)
            continue
        if e.name.endswith("q_proj." + m.group(2)):  # one fused row block per layer, in q's place
            shape = (rows, H) if m.group(2) == "weight" else (rows,)
            out.append(Expected(f"{m.group(1)}qkv_proj.{m.group(2)}", shape, "trunk"))
            if gate is not None and m.group(2) == "weight":
                out.append(Expected(f"{m.group(1)}g_proj.weight", (gate, H), "trunk"))
    width = spec.target_hidden_size or H
    out += [
        Expected(f"aux_hidden_norms.{i}.weight", (width,), "trunk") for i in range(len(spec.target_layer_ids))
    ]
    return out


def family_tensors(spec: DraftSpec, base: list[Expected]) -> list[Expected]:
    if spec.family == fam.XPRESS:
        return base + xpress_head(spec)
    if spec.family == fam.LAGUNA:
        return laguna(spec, base)
    if spec.family == fam.MOE:
        return [
            Expected(e.name, e.shape, e.component, optional=True) if _DENSE_MLP.match(e.name) else e
            for e in base
        ]
    return base


def known_part(spec: DraftSpec | None, name: str) -> bool:
    """A stored name the family's layout knows without a fixed shape (a MoE layer's experts and router)."""
    return spec is not None and spec.family == fam.MOE and _MOE_PARTS.match(name) is not None
