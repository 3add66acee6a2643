"""The assistant dialect: DFlash v1 as exported for Muse-Glimmer (`MuseGlimmerAssistantModel`,
model_type `muse_glimmer_assistant`).

A Qwen3-style root with the DFlash knobs (`target_layer_ids`, `block_size`, `mask_token_id`) flat at
the top level and no `dflash_config`; the context projection is stored as `encoder.fc.weight` and
`encoder.output_norm_enc.weight` (docs/contract.md#the-assistant-export-dialect). Recognised by that
structure, not by a model name:
any export with these keys and these tensor names is read the same way.

Who loads the encoder.* names (read from the public sources, pinned commits):
- vLLM: `DFlashQwen3Model.hf_to_vllm_mapper` maps `encoder.fc.` -> `fc.` and `encoder.output_norm_enc.`
  -> `hidden_norm.`, and the registry routes `MuseGlimmerAssistantModel` to qwen3_dflash
  (vllm-project/vllm 036a00d1, vllm/model_executor/models/qwen3_dflash.py).
- SGLang: `DFlashDraftModel.load_weights` resolves only a `model.` prefix and skips every other unknown
  name silently (sgl-project/sglang 003b23d7, python/sglang/srt/models/dflash.py): fc and hidden_norm
  would stay uninitialised.
- exllamav3 loads the encoder.* names as they are (`key_fc = "encoder.fc"`, vcruz305/exllamav3
  exllamav3/architecture/muse_glimmer_assistant.py), as does the transformers assistant model the export
  was saved from (its context projection is the `encoder` module: fc + output_norm_enc).

The pydantic model of the dialect is formats/assistant_model.py; this module stays free of pydantic, so
detecting the dialect costs no import.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

# stored name -> the name the nested / flat dialects (and vLLM after its remap) use
ASSISTANT_TENSORS = {"encoder.fc.weight": "fc.weight", "encoder.output_norm_enc.weight": "hidden_norm.weight"}
# the DFlash keys this dialect keeps at the top level
ASSISTANT_KEYS = ("target_layer_ids", "block_size", "mask_token_id")
ENGINE_SUPPORT = (
    "vLLM routes MuseGlimmerAssistantModel to its DFlash model and remaps encoder.fc / "
    "encoder.output_norm_enc to fc / hidden_norm; SGLang's DFlash loader does not remap them "
    "and skips them silently (fc and hidden_norm stay uninitialised); exllamav3 and the "
    "transformers assistant model read them as they are. `dflash2-ckpt convert --to nested` "
    "writes the names every DFlash engine loads"
)


def special_ids(config: Mapping[str, Any]) -> list[int]:
    """The token ids the config names (mask, eos, pad, bos): each must be inside the vocabulary."""
    out: list[int] = []
    for k in ("mask_token_id", "eos_token_id", "pad_token_id", "bos_token_id"):
        v = config.get(k)
        for x in v if isinstance(v, list) else [v]:
            if isinstance(x, int) and not isinstance(x, bool) and x >= 0:
                out.append(x)
    return out


def _names_assistant(config: Mapping[str, Any]) -> bool:
    archs = config.get("architectures")
    names = [a for a in archs if isinstance(a, str)] if isinstance(archs, list) else []
    mt = config.get("model_type")
    return any(a.endswith("AssistantModel") for a in names) or (
        isinstance(mt, str) and mt.endswith("_assistant")
    )


def is_assistant(config: Mapping[str, Any], tensor_names: Any = ()) -> bool:
    """The assistant structure: the DFlash keys at the top level, no dflash_config, no speculators
    discriminator, and an assistant class / model_type or the encoder.* tensors."""
    if "dflash_config" in config or "speculators_model_type" in config:
        return False
    if not all(k in config for k in ASSISTANT_KEYS) or "hidden_size" not in config:
        return False
    names = set(tensor_names)
    return _names_assistant(config) or any(n in names for n in ASSISTANT_TENSORS)
