"""Load a drafter's tensors the way the engines do, and account for every one of them.

Every tensor in the files must land in exactly one parameter of the reference drafter and every
parameter must be filled; a tensor that lands nowhere is what a loader would silently drop (the
v2-as-v1 failure), a parameter that stays empty is what it would leave uninitialised. Both are
findings, never a silent skip. Data is read with safetensors `safe_open` (never pickle).
"""
from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping

import torch
from safetensors import safe_open

from ..findings import Finding
from ..formats.assistant import ASSISTANT_TENSORS
from ..formats.spec import DraftSpec

# exports that suffix the codebooks with .weight: vLLM refuses the name (DF206 says so at header
# level), but the values are the same, so the smoke still proves they draft
ALIASES = {
    "candidate_selector.predecessor_codebook.weight": "candidate_selector.predecessor_codebook",
    "candidate_selector.successor_codebook.weight": "candidate_selector.successor_codebook",
    **ASSISTANT_TENSORS,      # the assistant export's encoder.* names (formats/assistant.py)
}
# copies of the target's embedding and head: not drafter parameters, borrowed by the forward
BORROWED = ("embed_tokens.weight", "lm_head.weight")


def parameter_shapes(spec: DraftSpec) -> dict[str, tuple[int, ...]]:
    """The reference drafter's parameters (CONTRACT §5)."""
    h, i, hd = spec.hidden_size, spec.intermediate_size, spec.head_dim
    nq, nkv = spec.num_attention_heads * hd, spec.num_key_value_heads * hd
    out: dict[str, tuple[int, ...]] = {
        "fc.weight": (h, spec.fc_in_features),
        "hidden_norm.weight": (h,),
        "norm.weight": (h,),
    }
    for n in range(spec.num_hidden_layers):
        p = f"layers.{n}."
        out[p + "input_layernorm.weight"] = (h,)
        out[p + "post_attention_layernorm.weight"] = (h,)
        for name, rows in (("q_proj", nq), ("k_proj", nkv), ("v_proj", nkv)):
            out[p + f"self_attn.{name}.weight"] = (rows, h)
            if spec.attention_bias:
                out[p + f"self_attn.{name}.bias"] = (rows,)
        out[p + "self_attn.o_proj.weight"] = (h, nq)
        if spec.attention_bias:
            out[p + "self_attn.o_proj.bias"] = (h,)
        out[p + "self_attn.q_norm.weight"] = (hd,)
        out[p + "self_attn.k_norm.weight"] = (hd,)
        out[p + "mlp.gate_proj.weight"] = (i, h)
        out[p + "mlp.up_proj.weight"] = (i, h)
        out[p + "mlp.down_proj.weight"] = (h, i)
        if spec.version == "v2":
            t, g = spec.conv_kernel_size or 0, spec.conv_groups or 0
            for mod in ("attention_conv", "mlp_conv"):
                out[p + f"{mod}.base_kernel"] = (2, t, h)
                out[p + f"{mod}.kernel_projection.weight"] = (2 * t * g, h)
    if spec.version == "v2":
        r, v = spec.selector_rank or 0, spec.vocab_size
        out["candidate_selector.predecessor_codebook"] = (v, r)
        out["candidate_selector.successor_codebook"] = (v, r)
        out["candidate_selector.hidden_projection.weight"] = (r, h)
    return out


@dataclass
class LoadedWeights:
    params: dict[str, torch.Tensor] = field(default_factory=dict)
    borrowed: dict[str, torch.Tensor] = field(default_factory=dict)   # embed_tokens / lm_head copies
    findings: list[Finding] = field(default_factory=list)

    @property
    def complete(self) -> bool:
        return not any(f.code in ("DF702", "DF713") for f in self.findings)


def _dtype_shape(handle: object, name: str) -> tuple[str, tuple[int, ...]]:
    sl = handle.get_slice(name)  # type: ignore[attr-defined]
    return str(sl.get_dtype()), tuple(sl.get_shape())


def load_weights(spec: DraftSpec, files: Mapping[str, Path], device: torch.device) -> LoadedWeights:
    """files: tensor name -> safetensors file holding it. Everything loads as float32 on `device`."""
    shapes = parameter_shapes(spec)
    out = LoadedWeights()
    filled_by: dict[str, str] = {}
    by_file: dict[Path, list[str]] = defaultdict(list)
    for name in sorted(files):
        by_file[Path(files[name])].append(name)
    for path, names in by_file.items():
        with safe_open(str(path), framework="pt", device="cpu") as f:
            for name in names:
                dtype, shape = _dtype_shape(f, name)
                target = ALIASES.get(name, name)
                if target in BORROWED:
                    out.borrowed[target] = f.get_tensor(name).to(device=device, dtype=torch.float32)
                    continue
                if target not in shapes:
                    out.findings.append(Finding(
                        "DF701", f"{name} {list(shape)} is not a parameter of this {spec.version} drafter: "
                        "a loader would drop it without a word; remove it or fix the config that omits its module",
                        tensor=name, file=path.name, details={"shape": list(shape), "dtype": dtype}))
                    continue
                if target in filled_by:
                    out.findings.append(Finding(
                        "DF701", f"{name} fills {target}, which {filled_by[target]} already filled; "
                        "one of the two is dropped — keep only one", tensor=name, file=path.name,
                        details={"parameter": target, "first": filled_by[target]}))
                    continue
                if shape != shapes[target] or not dtype.startswith(("F", "BF")):
                    out.findings.append(Finding(
                        "DF713", f"{name} is {dtype} {list(shape)} but the parameter needs a float tensor "
                        f"{list(shapes[target])}; the forward cannot run", tensor=name, file=path.name,
                        details={"shape": list(shape), "expected": list(shapes[target]), "dtype": dtype}))
                    filled_by[target] = name
                    continue
                filled_by[target] = name
                out.params[target] = f.get_tensor(name).to(device=device, dtype=torch.float32)
    for target in shapes:
        if target not in filled_by:
            out.findings.append(Finding(
                "DF702", f"parameter {target} {list(shapes[target])} is filled by no tensor: an engine leaves "
                "it uninitialised (or refuses to load); export the checkpoint again with it",
                tensor=target, details={"shape": list(shapes[target])}))
    return out
