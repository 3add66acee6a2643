"""The assistant export dialect -> the nested dialect (docs/contract.md#the-assistant-export-dialect,
#the-nested-dialect, #tensors): the DFlash keys move into
dflash_config, the architecture and model_type become the ones every DFlash engine routes on, and the
resolved causality is written explicitly. The flat dialect is reached through this nested form.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..engines.causality import intended as intended_causality
from ..formats.assistant import ASSISTANT_KEYS
from ..formats.spec import DraftSpec
from .configs import ARCH, KeyChange, _Writer


def assistant_to_nested(
    src: Mapping[str, Any], spec: DraftSpec
) -> tuple[dict[str, Any], list[KeyChange], list[str]]:
    w = _Writer()
    root: dict[str, Any] = {}
    dc: dict[str, Any] = {}
    for k, v in src.items():
        if k in ASSISTANT_KEYS:
            w.move(dc, k, v, k, f"dflash_config.{k}")
        elif k == "architectures":
            root[k] = [ARCH["v1"]]
            w.changes.append(
                KeyChange("changed", k, k, root[k], v, "the nested engines route on DFlashDraftModel")
            )
        elif k == "model_type":
            root[k] = "qwen3"
            w.changes.append(
                KeyChange("changed", k, k, "qwen3", v, "the nested dialect is a Qwen3 text config")
            )
        elif k == "auto_map":
            w.drop(k, v, "remote code of the assistant export, which is not carried over")
        else:
            root[k] = v
    # the class the export is saved from fills these when absent (formats/parse.py _assistant_spec); the
    # nested engines do not, so they are written out
    if "layer_types" not in root or root["layer_types"] is None:
        w.add(
            root,
            "layer_types",
            list(spec.layer_types),
            "layer_types",
            "the assistant config's default (every layer sliding), which the nested engines do not fill",
        )
    if "sliding_window" not in root:
        w.add(
            root,
            "sliding_window",
            spec.sliding_window,
            "sliding_window",
            "the assistant config's default window",
        )
    if "vocab_size" not in root:
        w.add(
            root,
            "vocab_size",
            spec.vocab_size,
            "vocab_size",
            "the target's vocabulary, which the export borrows without recording it",
        )
    if "architectures" not in root:
        w.add(root, "architectures", [ARCH["v1"]], "architectures", "the nested engines route on it")
    # the export means every layer bidirectional whatever it says (the transformers class it is saved from,
    # and vLLM 0.33's model-type default); the nested engines must be told so explicitly
    value = set(intended_causality(spec)).pop()
    if root.get("is_causal") != value:
        if "is_causal" in root:
            w.changes.append(
                KeyChange(
                    "changed",
                    "is_causal",
                    "is_causal",
                    value,
                    root["is_causal"],
                    "the assistant model ignores is_causal and runs every layer bidirectional",
                )
            )
            root["is_causal"] = value
        else:
            w.add(root, "is_causal", value, "is_causal", "resolved causality, explicit for vLLM and SGLang")
    w.add(dc, "causal", value, "dflash_config.causal", "the same value for vLLM before DFlash2 support")
    # exllamav3 taps the export's ids as written but a DFlashDraftModel's one layer deeper (engines/exllamav3.py)
    if "tap_shift" not in root:
        w.add(
            dc,
            "tap_shift",
            0,
            "dflash_config.tap_shift",
            "exllamav3 taps a DFlashDraftModel one layer deeper "
            "than the assistant export; pinned so it taps the same layers",
        )
    root["dflash_config"] = dc
    notes = [
        "tensors encoder.fc.weight / encoder.output_norm_enc.weight are written as fc.weight / "
        "hidden_norm.weight, the names the nested engines load"
    ]
    return root, w.changes, notes
