"""The logical view of a quantized checkpoint (quant/logical.py), built from config and headers once,
while the checkpoint opens (`Checkpoint.quant`).

Every quantized module's stored tensors (packed weight, scales, zero points, ...) collapse into one
logical tensor with the dense name and shape, so the layout checks (shapes, v1/v2 identity, pairing)
run unchanged on quantized drafters. `quantized_modules` is the per-module scheme map the engine
profiles take.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from ..errors import SourceError
from ..formats.parse import load_config
from ..quant.config import QuantConfig, QuantConfigError, Scheme, UnknownMethod, parse_quant_config
from ..quant.logical import QuantModule, QuantView
from ..quant.storage import AUX_SUFFIXES, MAIN_DTYPE, SUFFIXES, logical_shape, main_suffix
from ..sources.names import HF_QUANT_CONFIG
from ..sources.safetensors_header import FLOAT_DTYPES, TensorInfo
from .layout import expected_tensors

if TYPE_CHECKING:
    from .model import Checkpoint


def module_classes(ckpt: Checkpoint) -> dict[str, str | None]:
    """Module path -> class as the libraries match it: Linear for the projections, None for bare
    parameters (codebooks, base_kernel), RMSNorm for the norms."""
    if ckpt.spec is None:
        return {}
    out: dict[str, str | None] = {}
    for e in expected_tensors(ckpt.spec):
        if e.name.endswith(".weight"):
            out[e.name[: -len(".weight")]] = "Linear" if len(e.shape) == 2 else "RMSNorm"
        elif not e.name.endswith(".bias"):
            out[e.name] = None
    return out


def _read_config(ckpt: Checkpoint, view: QuantView) -> None:
    hf = None
    try:
        if HF_QUANT_CONFIG in ckpt.source.list_files():
            view.config_file = HF_QUANT_CONFIG
            hf, _ = load_config(ckpt.read_small(HF_QUANT_CONFIG), file=HF_QUANT_CONFIG)
            if hf is None:
                view.config_error = f"{HF_QUANT_CONFIG} is not a JSON object"
                return
        view.config = parse_quant_config(ckpt.config, hf)
    except UnknownMethod as e:
        view.unknown_method, view.config_error = True, str(e)
    except (QuantConfigError, SourceError) as e:
        view.config_error = str(e)


def _infer(config: QuantConfig | None, suffixes: set[str], main_dtype: str | None) -> Scheme | None:
    """The scheme a module stored quantized against its config (e.g. not ignored) was stored with."""
    if config is None:
        return None
    for g in config.groups:
        fam = g.scheme.family
        if suffixes <= set(SUFFIXES[fam]) and (main_dtype is None or main_dtype in MAIN_DTYPE[fam]):
            return g.scheme
    return None


def build_view(ckpt: Checkpoint) -> QuantView:
    """The view of `ckpt`'s config and tensors; open_checkpoint keeps it as `ckpt.quant`."""
    view = QuantView(classes=module_classes(ckpt))
    _read_config(ckpt, view)
    grouped: dict[str, dict[str, TensorInfo]] = {}
    for name, t in ckpt.tensors.items():
        mod, _, suffix = name.rpartition(".")
        if mod and suffix in AUX_SUFFIXES:
            grouped.setdefault(mod, {})[suffix] = t
    for name, t in ckpt.tensors.items():  # FP8 / MLX keep `.weight` for the quantized main tensor
        mod, _, suffix = name.rpartition(".")
        if suffix == "weight" and t.dtype not in FLOAT_DTYPES and mod in grouped:
            grouped[mod]["weight"] = t
    for mod, parts in grouped.items():
        cls = view.classes.get(mod, "Linear")
        declared = view.config.scheme_for(mod, cls) if view.config else None
        main = parts.get("weight") or parts.get("weight_packed")
        scheme = (
            declared
            if declared and set(parts) <= set(SUFFIXES[declared.family])
            else _infer(view.config, set(parts), main.dtype if main else None)
        )
        weight = mod if (mod in view.classes and view.classes[mod] is None) else f"{mod}.weight"
        logical = None
        if scheme is not None and main_suffix(scheme.family) in parts:
            m = parts[main_suffix(scheme.family)]
            logical = logical_shape(scheme, m.dtype, m.shape)
            view.logical[weight] = TensorInfo(weight, "BF16", logical, m.begin, m.end, m.file)
        view.modules[mod] = QuantModule(
            mod, weight, declared, scheme, tuple(sorted(f"{mod}.{s}" for s in parts)), logical
        )
        view.aux.update(f"{mod}.{s}" for s in parts)
    for name, t in ckpt.tensors.items():
        if name not in view.aux:
            view.logical.setdefault(name, t)
    return view


def quantized_modules(ckpt: Checkpoint) -> Mapping[str, str]:
    """Module path -> scheme label ("w4a16", "w8a16", "fp8", "nvfp4", "mlx-q4", "mlx-q8") for every
    module stored quantized, as the engine profiles take it."""
    return {m.module: m.label for m in ckpt.quant.modules.values()}
