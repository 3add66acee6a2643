"""Which stored tensor names the MLX engines' strict weight loading refuses (DF805).

Both load with mlx's `Module.load_weights(..., strict=True)`, which raises
ValueError("Received N parameters not in model: ...") for any key the model has no parameter for
(mlx==0.32.4 mlx/nn/layers/base.py). What reaches it is the stored name after the drafter's sanitize:

- mlx-vlm strips one `model.` prefix (DFlash2 also renames the bare codebooks to `.weight`); its drafters own
  no embedding or head (the target's are bound at run time), except that from 0.7.0 the DFlash v1 sanitize
  builds an embedding for a shipped embed_tokens.weight; its attention projections have no bias; from 0.7.0 a
  layer holds an attention_sink_bias parameter when the config sets attention_sink_bias, none before.
- dflash-mlx keeps every name as stored (its sanitize returns the weights unchanged); it owns no embedding or
  head either, and 0.1.8 refuses a draft lm_head by name before loading.

Quantization side tensors are left out: a quantized checkpoint's scales / biases are parameters once the
quantization config has made its layers quantized.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..quant.storage import is_side_tensor
from .profile import Drafter, listed

_COPIES = ("embed_tokens.weight", "lm_head.weight", "verifier_lm_head.weight", "verifier_norm.weight")
_MAP = re.compile(r"(?:t2d|d2t)(?:\.weight)?")
_ATTN_BIAS = re.compile(r"layers\.\d+\.self_attn\.[qkvo]_proj\.bias")
_SINK = re.compile(r"layers\.\d+\.self_attn\.(?:attention_sink_bias|sinks)")


@dataclass(frozen=True)
class Loader:
    """What one engine release's sanitize and model make of a stored name."""

    label: str  # the engine, as the message names it
    strips_prefix: bool  # sanitize strips one model. prefix
    embeds_v1: bool  # a DFlash v1 drafter's shipped embed_tokens.weight becomes a parameter (mlx-vlm 0.7)
    biased: bool  # its attention projections take a bias when attention_bias is set
    sinks: bool = False  # builds a per-layer attention_sink_bias parameter when the config asks (0.7)
    note: str = ""  # a refusal of its own that comes first


def _asks_sinks(d: Drafter) -> bool:
    """The config's attention_sink_bias as mlx-vlm 0.7 reads it: the DFlash v1 config takes dflash_config's
    over the top level, the DFlash2 config the top level only."""
    dc = d.config.get("dflash_config")
    if d.version == "v1" and isinstance(dc, dict) and "attention_sink_bias" in dc:
        return bool(dc["attention_sink_bias"])
    return bool(d.config.get("attention_sink_bias"))


def _why(name: str, key: str, d: Drafter, loader: Loader) -> str | None:
    """Why the model has no parameter for the stored name (None: it has one, or it is not provably refused)."""
    if is_side_tensor(name):
        return None
    if name.startswith("model.") and not loader.strips_prefix:
        return "a model. prefix it keeps"
    if key in _COPIES and not (loader.embeds_v1 and d.version == "v1" and key == "embed_tokens.weight"):
        return "a copy of the target's table (the drafter uses the target's, bound at run time)"
    if _MAP.fullmatch(key):
        return "a vocabulary map"
    if _ATTN_BIAS.fullmatch(key) and not loader.biased:
        return "an attention bias (its projections have none)"
    if _SINK.fullmatch(key):
        built = loader.sinks and key.endswith(".attention_sink_bias") and _asks_sinks(d)
        return None if built else "an attention sink it builds no parameter for"
    if name in d.unexpected:
        return "not part of the drafter"
    return None


def refused(d: Drafter, loader: Loader) -> dict[str, str]:
    """stored name -> why the strict load has no parameter for it."""
    out = {}
    for name in sorted(d.tensors):
        key = name.removeprefix("model.") if loader.strips_prefix else name
        why = _why(name, key, d, loader)
        if why is not None:
            out[name] = why
    return out


def complaint(d: Drafter, loader: Loader) -> str | None:
    names = refused(d, loader)
    if not names:
        return None
    by: dict[str, list[str]] = {}
    for name, why in names.items():
        by.setdefault(why, []).append(name)
    parts = "; ".join(f"{listed(ns, 3)}: {why}" for why, ns in by.items())
    one = len(names) == 1
    return (
        f"{loader.label} loads weights strictly and has no parameter for {len(names)} stored "
        f"tensor{'' if one else 's'} ({parts}): mlx raises ValueError 'Received {len(names)} parameters not "
        f"in model: ...'{loader.note}; remove {'it' if one else 'them'} from the safetensors files"
    )
