"""Which DFlash family a drafter is, beside plain DFlash / DFlash2: from its architecture, config and tensors.

vLLM's registry routes these architectures to their own model classes (engines/vllm_families.py judges them
per release; docs/families.md describes each):

- ricursive: `DFlash2DraftModel` with a non-empty top-level `no_rope_layers` (vLLM 0.34.0 renames it
  `DFlash2RicursiveDraftModel`); the listed layer INDICES run without RoPE.
- beam: `DFlash2BeamDraftModel` (`vllm.models.beam`, a DFlash2 drafter of Beam targets).
- xpress: `Qwen3XPressModel` / `DFlashQwen3XPressModel`, a DFlash v1 trunk plus an `xpress_head.*` refiner.
- laguna: `DFlashLagunaForCausalLM`, a DFlash v1 drafter built from Laguna layers (fused qkv_proj, g_proj).
- muse-assistant: the Muse-Glimmer assistant export, `MuseGlimmerAssistantModel` /
  `DFlashMuseGlimmerAssistantModel` or model_type `muse_glimmer_assistant`.
- moe: a DFlash2 drafter with expert MLPs (an open vLLM pull request; no released engine loads one).

Pure data and functions on the config dict and tensor names: no pydantic, no torch.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

RICURSIVE, BEAM, XPRESS, LAGUNA, MUSE, MOE = "ricursive", "beam", "xpress", "laguna", "muse-assistant", "moe"

BEAM_ARCH = "DFlash2BeamDraftModel"
RICURSIVE_ARCH = "DFlash2RicursiveDraftModel"
XPRESS_ARCHS = ("Qwen3XPressModel", "DFlashQwen3XPressModel")
LAGUNA_ARCH = "DFlashLagunaForCausalLM"
MUSE_ARCHS = ("MuseGlimmerAssistantModel", "DFlashMuseGlimmerAssistantModel")
MUSE_MODEL_TYPE = "muse_glimmer_assistant"

# an expert MLP inside a draft layer: layers.N.mlp.experts.E.* (or the fused experts.w13 / gate_up forms)
_EXPERT = re.compile(r"^(?:model\.)?layers\.\d+\.(?:mlp|block_sparse_moe)\.experts\.")

# config keys each family's loader reads, so verify neither calls them unknown (DF116) nor unread
KEYS: dict[str, frozenset[str]] = {
    RICURSIVE: frozenset({"no_rope_layers"}),
    XPRESS: frozenset(
        {
            "xpress_block_size",
            "num_speculative_steps",
            "xpress_rank",
            "xpress_mlp_hidden",
            "xpress_topc",
            "xpress_compile_head",
            "draft_vocab_size",
            "logit_scale",
        }
    ),
    LAGUNA: frozenset(
        {
            "draft_vocab_size",
            "gating",
            "mlp_layer_types",
            "num_attention_heads_per_layer",
            "swa_rope_parameters",
            "attention_sink",
            "num_experts",
            "num_experts_per_tok",
            "moe_intermediate_size",
            "shared_expert_intermediate_size",
        }
    ),
}


@dataclass(frozen=True)
class Family:
    name: str  # one of the names above
    label: str  # what a person reads
    architecture: str  # the architecture vLLM's registry is asked for
    evidence: tuple[str, ...]  # the config keys / tensor names it was recognised by


def _archs(config: Mapping[str, Any]) -> list[str]:
    raw = config.get("architectures")
    return [a for a in raw if isinstance(a, str)] if isinstance(raw, list) else []


def no_rope_layers(config: Mapping[str, Any]) -> Any:
    """The value vLLM 0.34.0's Ricursive routing reads: the top-level no_rope_layers (nested, assistant), or
    transformer_layer_config's (flat: speculators' mapping builds the drafter config from it)."""
    if "speculators_model_type" in config:
        tl = config.get("transformer_layer_config")
        return tl.get("no_rope_layers") if isinstance(tl, dict) else None
    return config.get("no_rope_layers")


def expert_tensors(names: Iterable[str]) -> list[str]:
    return sorted(n for n in names if _EXPERT.match(n))


def family_of(config: Mapping[str, Any], tensor_names: Iterable[str] = ()) -> Family | None:
    """The family a drafter config (and its stored tensors) names, or None for plain DFlash / DFlash2."""
    archs = _archs(config)
    names = list(tensor_names)
    experts = expert_tensors(names)
    if experts:
        return Family(MOE, "MoE DFlash2", archs[0] if archs else "", (experts[0],))
    if "speculators_model_type" in config:
        # vLLM's flat mapping writes the plain architecture whatever this one names (released_families
        # FAM_FLAT_ARCH): only the Ricursive key survives, in transformer_layer_config
        archs = (
            ["DFlash2DraftModel"]
            if config.get("speculators_model_type") == "dflash2"
            else ["DFlashDraftModel"]
        )
    if BEAM_ARCH in archs:
        return Family(BEAM, "Beam DFlash2", BEAM_ARCH, ("architectures",))
    if RICURSIVE_ARCH in archs or ("DFlash2DraftModel" in archs and no_rope_layers(config)):
        return Family(RICURSIVE, "Ricursive DFlash2 (NoPE layers)", RICURSIVE_ARCH, ("no_rope_layers",))
    xpress = [n for n in names if n.startswith("xpress_head.")]
    if any(a in XPRESS_ARCHS for a in archs) or (xpress and "speculators_model_type" not in config):
        arch = next((a for a in archs if a in XPRESS_ARCHS), XPRESS_ARCHS[0])
        return Family(XPRESS, "XPress DFlash", arch, ("architectures",) if arch in archs else (xpress[0],))
    if LAGUNA_ARCH in archs:
        return Family(LAGUNA, "Laguna DFlash", LAGUNA_ARCH, ("architectures",))
    muse = next((a for a in archs if a in MUSE_ARCHS), None)
    if muse is not None or config.get("model_type") == MUSE_MODEL_TYPE:
        return Family(
            MUSE,
            "Muse-Glimmer assistant",
            muse or MUSE_ARCHS[1],
            ("architectures",) if muse else ("model_type",),
        )
    return None


def family_keys(name: str | None) -> frozenset[str]:
    return KEYS.get(name or "", frozenset())


def nope_layers(config: Mapping[str, Any], num_layers: int) -> list[int]:
    """The draft layers vLLM 0.34.0 runs without RoPE: the listed indices inside [0, num_layers)."""
    value = no_rope_layers(config)
    if not isinstance(value, list):
        return []
    return sorted(
        {v for v in value if isinstance(v, int) and not isinstance(v, bool) and 0 <= v < num_layers}
    )


def looks_like_mask(value: Any, num_layers: int) -> bool:
    """A per-layer 0/1 mask (SmolLM3 / Muse targets: 1 = rotate), not a list of layer indices."""
    return (
        isinstance(value, list)
        and len(value) == num_layers
        and num_layers > 1
        and all(type(v) is int and v in (0, 1) for v in value)
    )
