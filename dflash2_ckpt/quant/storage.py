"""How each scheme stores one quantized linear (docs/engines.md, quantized drafters): the tensors, their
dtypes and shapes.

Given the stored main tensor, `logical_shape` recovers the dense [out, in]; `expected_aux` lists
every tensor the loader needs with the shape the scheme implies, so a missing or mis-shaped scale
is found from the header alone. Shapes follow the compressors of compressed-tensors 0.20
(compressors/pack_quantized, compressors/nvfp4, naive_quantized), ModelOpt's export
(modelopt/torch/export/quant_utils.py) and mlx.core.quantize.
"""

from __future__ import annotations

from dataclasses import dataclass

from .config import Family, Scheme

# suffixes a quantized module may store, by family; "weight" is the main tensor where it keeps its name
SUFFIXES: dict[Family, tuple[str, ...]] = {
    "ct-pack": ("weight_packed", "weight_scale", "weight_shape", "weight_zero_point", "weight_g_idx"),
    "ct-float": ("weight", "weight_scale", "weight_zero_point", "input_scale"),
    "ct-nvfp4": ("weight_packed", "weight_scale", "weight_global_scale", "input_global_scale"),
    "modelopt-fp8": ("weight", "weight_scale", "input_scale"),
    "modelopt-nvfp4": ("weight", "weight_scale", "weight_scale_2", "input_scale"),
    "mlx-affine": ("weight", "scales", "biases"),
}
# any of these after a module path marks it as stored quantized, whatever the config says
AUX_SUFFIXES = frozenset(s for v in SUFFIXES.values() for s in v if s != "weight") | {
    "qweight",
    "qzeros",
    "g_idx",
}


def is_side_tensor(name: str) -> bool:
    """A quantization side tensor by its name alone (a scale, zero point, index; any *_scale or *scales): the
    quantization config's own mappers route it, so the engines' name checks leave it out."""
    return name.rsplit(".", 1)[-1] in AUX_SUFFIXES or name.endswith(("_scale", "scales"))


MAIN: dict[Family, str] = {"ct-pack": "weight_packed", "ct-nvfp4": "weight_packed"}
MAIN_DTYPE: dict[Family, tuple[str, ...]] = {
    "ct-pack": ("I32",),
    "ct-float": ("F8_E4M3", "F8_E5M2", "I8"),
    "ct-nvfp4": ("U8",),
    "modelopt-fp8": ("F8_E4M3",),
    "modelopt-nvfp4": ("U8",),
    "mlx-affine": ("U32",),
}
SCALAR: tuple[tuple[int, ...], ...] = ((), (1,))


def cdiv(a: int, b: int) -> int:
    return -(-a // b)


@dataclass(frozen=True)
class Aux:
    suffix: str
    shapes: tuple[tuple[int, ...], ...]  # any of these is consistent
    why: str
    dtypes: tuple[str, ...] = ()  # empty: any


def main_suffix(family: Family) -> str:
    return MAIN.get(family, "weight")


def elements_per_stored(scheme: Scheme, dtype: str) -> int:
    """How many logical values one stored element of the main tensor holds."""
    if scheme.family in ("ct-pack", "mlx-affine"):
        return (32 if dtype in ("I32", "U32") else 8) // scheme.bits
    if scheme.family in ("ct-nvfp4", "modelopt-nvfp4"):
        return 2
    return 1


def logical_shape(scheme: Scheme, dtype: str, stored: tuple[int, ...]) -> tuple[int, ...]:
    if not stored:
        return stored
    return (*stored[:-1], stored[-1] * elements_per_stored(scheme, dtype))


def _scale_shapes(scheme: Scheme, out: int, inn: int) -> tuple[tuple[int, ...], ...]:
    if scheme.strategy in ("group", "tensor_group") and scheme.group_size:
        return ((out, cdiv(inn, scheme.group_size)),)
    if scheme.strategy == "channel":
        return ((out, 1),)
    return SCALAR


def expected_aux(scheme: Scheme, logical: tuple[int, ...]) -> list[Aux]:
    """Every tensor besides the main one that the loader reads for this module."""
    if len(logical) != 2:
        return []
    out, inn = logical
    f = scheme.family
    if f == "ct-pack":
        aux = [
            Aux(
                "weight_scale", _scale_shapes(scheme, out, inn), "the scale the int weights are multiplied by"
            ),
            Aux("weight_shape", ((2,),), "the dense shape the packed weight unpacks to", ("I64", "I32")),
        ]
        if not scheme.symmetric:
            cols = _scale_shapes(scheme, out, inn)[0]
            zp = (cdiv(out, 32 // scheme.bits), cols[-1]) if len(cols) == 2 else cols
            aux.append(
                Aux("weight_zero_point", (zp,), "the zero point of asymmetric quantization (packed on rows)")
            )
        return aux
    if f == "ct-float":
        aux = [Aux("weight_scale", _scale_shapes(scheme, out, inn), "the FP8 weight scale")]
        if scheme.static_input:
            aux.append(Aux("input_scale", SCALAR, "the static activation scale"))
        return aux
    if f == "ct-nvfp4":
        g = scheme.group_size or 16
        aux = [
            Aux("weight_scale", ((out, cdiv(inn, g)),), f"the FP8 scale of each group of {g}", ("F8_E4M3",)),
            Aux("weight_global_scale", ((1,),), "the per-tensor global scale"),
        ]
        if scheme.input_global:
            aux.append(Aux("input_global_scale", ((1,),), "the activation global scale"))
        return aux
    if f == "modelopt-fp8":
        return [
            Aux("weight_scale", SCALAR + ((out, 1),), "the FP8 weight scale"),
            Aux("input_scale", SCALAR, "the static activation scale"),
        ]
    if f == "modelopt-nvfp4":
        g = scheme.group_size or 16
        return [
            Aux("weight_scale", ((out, cdiv(inn, g)),), f"the FP8 scale of each group of {g}", ("F8_E4M3",)),
            Aux("weight_scale_2", SCALAR, "the per-tensor second-level scale"),
            Aux("input_scale", SCALAR, "the static activation scale"),
        ]
    g = scheme.group_size or 64
    return [
        Aux("scales", ((out, cdiv(inn, g)),), f"the scale of each group of {g}"),
        Aux("biases", ((out, cdiv(inn, g)),), f"the offset of each group of {g}"),
    ]


def stored_main_shape(scheme: Scheme, logical: tuple[int, ...]) -> tuple[int, ...]:
    """The inverse of logical_shape (for writers and tests)."""
    per = {"ct-pack": 32 // scheme.bits, "mlx-affine": 32 // scheme.bits, "ct-nvfp4": 2, "modelopt-nvfp4": 2}
    n = per.get(scheme.family, 1)
    return (*logical[:-1], cdiv(logical[-1], n))
