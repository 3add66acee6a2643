"""Quantized checkpoints across the dialects: the quantization config and its module names.

Both dialects keep `quantization_config` (MLX: `quantization`) at the top level of config.json: that is
where transformers' `from_pretrained` (and so speculators, whose config is a PretrainedConfig) and vLLM
look for it. Auxiliary tensors are ordinary tensors to the streamer and are copied bit-exact. When a
module is renamed (the `model.` prefix dropped), exact-name `ignore` / `targets` entries are rewritten and
every module must resolve to the same scheme before and after, or the conversion is refused.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping
from typing import Any

from ..errors import ConversionError
from ..quant.config import QuantConfigError, parse_quant_config
from ..quant.storage import AUX_SUFFIXES
from .configs import KeyChange


def module_renames(pairs: Iterable[tuple[str, str]]) -> dict[str, str]:
    """source module -> destination module, from (source tensor, destination tensor) names."""
    out = {}
    for src, dst in pairs:
        sm, _, ss = src.rpartition(".")
        dm, _, ds = dst.rpartition(".")
        if sm and dm and sm != dm and ss == ds and (ss in AUX_SUFFIXES or ss == "weight"):
            out[sm] = dm
    return out


def _rename_list(v: Any, renames: Mapping[str, str]) -> Any:
    if not isinstance(v, list):
        return v
    return [renames.get(x, x) if isinstance(x, str) else x for x in v]


def carry_quantization(
    src: Mapping[str, Any], out: dict[str, Any], renames: Mapping[str, str], modules: Iterable[str]
) -> list[KeyChange]:
    """Rewrite out's quantization config for renamed modules; refuse if any module's scheme changes."""
    q = out.get("quantization_config")
    if not renames or not isinstance(q, dict):
        return []
    new = copy.deepcopy(q)
    changes = []
    for key in ("ignore", "exclude_modules"):
        if key in new and new[key] != (renamed := _rename_list(new[key], renames)):
            changes.append(
                KeyChange(
                    "changed",
                    f"quantization_config.{key}",
                    f"quantization_config.{key}",
                    renamed,
                    new[key],
                    "exact module names follow the renamed tensors",
                )
            )
            new[key] = renamed
    for group in (new.get("config_groups") or {}).values():
        if isinstance(group, dict) and group.get("targets") != (
            t := _rename_list(group.get("targets"), renames)
        ):
            group["targets"] = t
    try:
        before, after = parse_quant_config(src), parse_quant_config({**out, "quantization_config": new})
    except QuantConfigError:
        return changes  # verify reports the malformed config; it is carried as it was
    if before is None or after is None:
        return changes
    for mod in modules:
        dst = renames.get(mod, mod)
        if before.scheme_for(mod) != after.scheme_for(dst):
            raise ConversionError(
                f"{mod} is renamed {dst}, and quantization_config would then give it another "
                "scheme (an ignore / targets regular expression names the old path)",
                hint="rewrite that entry for the new names, or keep the source dialect",
            )
    out["quantization_config"] = new
    return changes
