"""Dequantize a row range of one module, and the rounding noise its scheme predicts for those rows.

compressed-tensors formats are decoded by ct_decode.py, which reproduces the library's `decompress` of
pack-quantized, float-quantized and nvfp4-pack-quantized bit for bit without importing it (why: there);
layouts it does not cover go through the library's own compressors. ModelOpt and MLX have no maintained torch-only
reader, so they are decoded here from their published layouts (docs/engines.md, quantized drafters;
modelopt/torch/export, mlx.core.dequantize): FP8 x scale; E2M1 nibbles (low nibble first) x FP8 group
scale x scale_2; MLX affine q x scales + biases with q packed little-endian into uint32.

Noise model (what `quantization-noise` means): rounding to a grid of step D leaves an error uniform in
[-D/2, D/2], variance D^2/12, when the quantizer rounds to nearest (min-max, GPTQ and AWQ all end by
rounding onto the grid). Per element D is the int / affine scale; for floating-point grids it is the
spacing of the grid around the value: FP8 E4M3 has 3 mantissa bits, so D = 2^-3 * 2^floor(log2|x|);
NVFP4's E2M1 grid {0, .5, 1, 1.5, 2, 3, 4, 6} x s has D = s/2 below 2s, s below 4s, 2s above. The sum
of D^2/12 over a tensor is the predicted squared error; compare.py allows a multiple of it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import torch

from ..errors import MissingDependencyError
from ..quant.config import QuantConfig, Scheme
from .rows import ALL

RowReader = Callable[[str, int, int], torch.Tensor]  # (tensor name, row0, row1) -> stored rows

E2M1 = torch.tensor([0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0, -0.0, -0.5, -1.0, -1.5, -2.0, -3.0, -4.0, -6.0])


def _expand(scale: torch.Tensor, rows: int, cols: int) -> torch.Tensor:
    """A [rows, groups] / [rows, 1] / scalar scale broadcast to every element of [rows, cols]."""
    s = scale.float()
    if s.numel() == 1:
        return s.reshape(1, 1).expand(rows, cols)
    groups = s.shape[-1]
    g = -(-cols // groups)
    return s.reshape(rows, groups).repeat_interleave(g, dim=1)[:, :cols]


def _scale_var(scale: torch.Tensor, rows: int, cols: int) -> float:
    """Sum over the elements of D^2/12 for a per-group (or per-row / per-tensor) step D."""
    s = scale.float().reshape(-1)
    per = rows * cols / s.numel()  # elements per scale entry (groups that divide cols evenly)
    if per == int(per):
        return float((s * s).sum(dtype=torch.float64)) * per / 12
    e = _expand(scale, rows, cols)
    return float((e * e / 12).sum(dtype=torch.float64))


def _float_grid_var(x: torch.Tensor, mantissa_bits: int) -> torch.Tensor:
    """D^2/12 for a floating-point grid with `mantissa_bits` explicit bits, around each |x|: in one new tensor,
    updated in place (the same kernels and values as the out-of-place expression, a fifth of its cost)."""
    v = x.abs().clamp_min_(torch.finfo(torch.float32).tiny)
    torch.log2(v, out=v)
    v.floor_().sub_(mantissa_bits).exp2_()
    return v.mul_(v).div_(12)


def _fp4_var(q: torch.Tensor, s: torch.Tensor) -> torch.Tensor:
    """D^2/12 on the E2M1 grid x s: D is s/2 below 2, s below 4, else 2s (Inf and NaN too: torch.where's
    choice for them). Read off |q|'s exponent field E in place: clamp(E, 127, 129) - 1 is the exponent of
    0.5, 1 or 2; torch.where over Python scalars cost about 9 ns a value (512 Ki values, measured)."""
    e = q.abs().view(torch.int32)
    torch.bitwise_right_shift(e, 23, out=e)
    torch.bitwise_left_shift(e.clamp_(127, 129).sub_(1), 23, out=e)
    step = e.view(torch.float32).mul_(s)
    return step.mul_(step).div_(12)


def _ct_scheme(config: QuantConfig, module: str, raw: Mapping[str, Any]) -> Any:
    # heavy: compressed_tensors loads only when this runs
    from compressed_tensors.quantization import QuantizationScheme

    group = config.group_for(module)
    if group is None:
        raise ValueError(f"{module}: no config group of {config.where} covers it")
    return QuantizationScheme.model_validate(raw["config_groups"][group.name])


def _ct_decompress(
    fam: str, config: QuantConfig, raw_config: Mapping[str, Any], module: str, sd: dict[str, torch.Tensor]
) -> torch.Tensor:
    """The library's own decompress (the decoder of record), for the layouts ct_decode.py does not cover."""
    try:
        # optional extra: compressed_tensors, ImportError answered below
        from compressed_tensors.compressors import BaseCompressor
    except ImportError as e:
        raise MissingDependencyError(
            f"{module}: this layout is decoded by compressed-tensors ({e.name} is missing)",
            hint='pip install "dflash2-ckpt[diff]"',
        ) from None
    fmt = {"ct-pack": "pack-quantized", "ct-float": "float-quantized", "ct-nvfp4": "nvfp4-pack-quantized"}[
        fam
    ]
    comp = BaseCompressor.load_from_registry(fmt)
    w: torch.Tensor = comp.decompress(sd, _ct_scheme(config, module, raw_config))["weight"].float()
    return w


def dequantize_rows(
    scheme: Scheme,
    config: QuantConfig,
    raw_config: Mapping[str, Any],
    module: str,
    read: RowReader,
    logical: tuple[int, ...],
    r0: int,
    r1: int,
) -> tuple[torch.Tensor, float]:
    """(float32 rows r0:r1 of the dense weight, predicted squared rounding error summed over them)."""
    rows, cols = r1 - r0, logical[-1]
    p = f"{module}."
    fam = scheme.family
    if fam.startswith("ct-"):
        from . import ct_decode  # lazy: diff.ct_decode loads only on this path

        sd: dict[str, torch.Tensor] = {}
        main = "weight_packed" if fam != "ct-float" else "weight"
        sd[main] = read(p + main, r0, r1)
        scale = read(p + "weight_scale", *((0, ALL) if scheme.strategy == "tensor" else (r0, r1)))
        sd["weight_scale"] = scale
        if fam == "ct-pack":
            sd["weight_shape"] = torch.tensor([rows, cols])
            if not scheme.symmetric:
                per = 32 // scheme.bits
                sd["weight_zero_point"] = read(p + "weight_zero_point", r0 // per, -(-r1 // per))
        if fam == "ct-nvfp4":
            sd["weight_global_scale"] = read(p + "weight_global_scale", 0, ALL)
        if not ct_decode.supported(fam, scheme, scale, cols, sd[main], sd.get("weight_global_scale")):
            w = _ct_decompress(fam, config, raw_config, module, sd)
        elif fam == "ct-pack":
            w = ct_decode.pack(sd[main], scheme.bits, cols, scale, scheme, sd.get("weight_zero_point"))
        elif fam == "ct-float":
            w = ct_decode.float_quantized(sd[main], scale, scheme)
        else:
            w = ct_decode.nvfp4(sd[main], cols, scale, sd["weight_global_scale"])
        if fam == "ct-float":
            return w, float(_float_grid_var(w, 3).sum(dtype=torch.float64))
        if fam == "ct-nvfp4":
            s = _expand(scale, rows, cols).contiguous().div_(sd["weight_global_scale"].float().reshape(1, 1))
            return w, float(_fp4_var(w / s.clamp_min(1e-30), s).sum(dtype=torch.float64))
        return w, _scale_var(scale, rows, cols)
    if fam == "modelopt-fp8":
        scale = read(p + "weight_scale", 0, ALL).float()
        scale = scale.reshape(1, 1) if scale.numel() == 1 else scale.reshape(-1, 1)[r0:r1]
        from .ct_decode import widen  # lazy: diff.ct_decode loads only on this path

        w = widen(read(p + "weight", r0, r1)) * scale
        return w, float(_float_grid_var(w, 3).sum(dtype=torch.float64))
    if fam == "modelopt-nvfp4":
        packed = read(p + "weight", r0, r1).to(torch.int64)
        q = torch.stack([E2M1[packed & 0xF], E2M1[packed >> 4]], dim=-1).reshape(rows, -1)[:, :cols]
        s = _expand(read(p + "weight_scale", r0, r1), rows, cols) * read(p + "weight_scale_2", 0, ALL).float()
        return q * s, float(_fp4_var(q, s).sum(dtype=torch.float64))
    # MLX affine
    packed = read(p + "weight", r0, r1).to(torch.int64) & 0xFFFFFFFF
    per = 32 // scheme.bits
    shifts = torch.arange(per, dtype=torch.int64) * scheme.bits
    q = ((packed.unsqueeze(-1) >> shifts) & ((1 << scheme.bits) - 1)).reshape(rows, -1)[:, :cols].float()
    scales = read(p + "scales", r0, r1)
    s = _expand(scales, rows, cols)
    b = _expand(read(p + "biases", r0, r1), rows, cols)
    return q * s + b, _scale_var(scales, rows, cols)
