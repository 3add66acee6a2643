"""Tiny drafters written into tmp_path for the smoke tests: a DraftSpec plus one safetensors file."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import torch
from safetensors.torch import save_file

from dflash2_ckpt.formats.spec import DraftSpec
from dflash2_ckpt.smoke.weights import parameter_shapes

H, I, L, NQ, NKV, HD, V = 32, 48, 2, 4, 2, 8, 40


def tiny_spec(version: str = "v2", **over: Any) -> DraftSpec:
    base: dict[str, Any] = dict(
        version=version,
        dialect="nested",
        hidden_size=H,
        intermediate_size=I,
        num_hidden_layers=L,
        num_attention_heads=NQ,
        num_key_value_heads=NKV,
        head_dim=HD,
        vocab_size=V,
        target_layer_ids=(0, 2),
        layer_types=("sliding_attention", "full_attention"),
        sliding_window=6,
        mask_token_id=V - 1,
        block_size=5,
        num_target_layers=4,
    )
    if version == "v2":
        base.update(conv_kernel_size=2, conv_group_size=8, selector_rank=8, selector_top_k=4)
    base.update(over)
    return DraftSpec(**base)


def tiny_params(
    spec: DraftSpec,
    *,
    seed: int = 0,
    identity_conv: bool = False,
    zero_selector: bool = False,
    selector_scale: float = 1.5,
) -> dict[str, torch.Tensor]:
    """Seeded weights scaled so every module visibly moves the output (unless told to be inert)."""
    gen = torch.Generator().manual_seed(seed)
    out: dict[str, torch.Tensor] = {}
    for name, shape in parameter_shapes(spec).items():
        if name.endswith("norm.weight"):
            t = 1.0 + 0.1 * torch.randn(shape, generator=gen)
        elif name.endswith("base_kernel"):
            t = 0.5 * torch.randn(shape, generator=gen)
            t[:, 0] += 1.0
        elif name.startswith("candidate_selector") and "codebook" in name:
            t = selector_scale * torch.randn(shape, generator=gen)
        else:
            t = torch.randn(shape, generator=gen) / shape[-1] ** 0.5
        out[name] = t.contiguous()
    for name in list(out):
        if identity_conv and name.endswith("base_kernel"):
            out[name] = torch.zeros_like(out[name])
            out[name][:, 0] = 1.0
        if identity_conv and "_conv.kernel_projection" in name:
            out[name] = torch.zeros_like(out[name])
        if zero_selector and "codebook" in name:
            out[name] = torch.zeros_like(out[name])
    return out


def write(dir_: Path, tensors: dict[str, torch.Tensor], file: str = "model.safetensors") -> dict[str, Path]:
    dir_.mkdir(parents=True, exist_ok=True)
    path = dir_ / file
    save_file({k: v.contiguous() for k, v in tensors.items()}, str(path))
    return {k: path for k in tensors}


def tiny_embed(spec: DraftSpec, seed: int = 1) -> dict[str, torch.Tensor]:
    gen = torch.Generator().manual_seed(seed)
    return {
        "embed_tokens.weight": torch.randn(spec.vocab_size, spec.hidden_size, generator=gen),
        "lm_head.weight": torch.randn(spec.vocab_size, spec.hidden_size, generator=gen)
        / spec.hidden_size**0.5,
    }
