"""Where vLLM's DFlash families (formats/families.py) are written in its released code: one Cite per fact.

released.py re-exports these, so all_cites() and tests/engines/test_released.py check every one of them.
"""

from __future__ import annotations

from .profile import Cite

V_MODELS = "vllm/model_executor/models/"
V_REGISTRY = V_MODELS + "registry.py"
V_DFLASH = V_MODELS + "qwen3_dflash.py"
V_DFLASH2 = V_MODELS + "qwen3_dflash2.py"
V_RICURSIVE = V_MODELS + "ricursive_dflash2.py"
V_XPRESS = V_MODELS + "qwen3_xpress.py"
V_LAGUNA = V_MODELS + "laguna_dflash.py"
V_BEAM_NV = "vllm/models/beam/nvidia/dflash2.py"
V_BEAM_AMD = "vllm/models/beam/amd/dflash2.py"
V_SPEC_CONFIG = "vllm/config/speculative.py"

# --- Ricursive (0.34.0): DFlash2DraftModel + a non-empty no_rope_layers; the listed layer INDICES skip RoPE
FAM_RICURSIVE_ROUTE = Cite(
    "vllm",
    ("0.34.0",),
    V_SPEC_CONFIG,
    '        if initial_architecture == "DFlash2DraftModel" and getattr(\n'
    '            hf_config, "no_rope_layers", None\n        ):',
)
FAM_RICURSIVE_REG = Cite("vllm", ("0.34.0",), V_REGISTRY, '"DFlash2RicursiveDraftModel": (')
FAM_RICURSIVE_REG_ABSENT = Cite("vllm", ("0.33.0",), V_REGISTRY, "DFlash2RicursiveDraftModel", absent=True)
FAM_RICURSIVE_INDEX = Cite("vllm", ("0.34.0",), V_RICURSIVE, "if layer_idx in config.no_rope_layers:")
FAM_RICURSIVE_CONTEXT = Cite(
    "vllm", ("0.34.0",), V_RICURSIVE, "nope_k = [all_k[i].clone() for i in nope_layers]"
)
# 0.33.0 reads no_rope_layers nowhere in its DFlash code: every layer rotates
FAM_NO_ROPE_UNREAD = Cite("vllm", ("0.33.0",), V_DFLASH, "no_rope_layers", absent=True)
FAM_NO_ROPE_UNREAD2 = Cite("vllm", ("0.33.0",), V_DFLASH2, "no_rope_layers", absent=True)
FAM_NO_ROPE_UNROUTED = Cite("vllm", ("0.33.0",), V_SPEC_CONFIG, "no_rope_layers", absent=True)

# --- Beam (0.33.0-): DFlash2BeamDraftModel -> vllm.models.beam
FAM_BEAM_REG = Cite(
    "vllm",
    ("0.33.0", "0.34.0"),
    V_REGISTRY,
    '"DFlash2BeamDraftModel": ("vllm.models.beam", "DFlash2BeamForCausalLM")',
)
FAM_BEAM_REG_ABSENT = Cite("vllm", ("0.32.0",), V_REGISTRY, "DFlash2BeamDraftModel", absent=True)
FAM_BEAM_SLIDING = Cite(
    "vllm", ("0.33.0", "0.34.0"), V_BEAM_NV, 'assert config.layer_types[layer_idx] == "sliding_attention"'
)
# without layer_types, transformers' Qwen3Config (the releases vLLM 0.33-0.34 pin) fills it: sliding where a
# sliding_window is set and the layer index reaches max_window_layers (28 by default), else full
TF_QWEN3 = "transformers/models/qwen3/configuration_qwen3.py"
FAM_QWEN3_LAYER_TYPES = Cite(
    "transformers",
    ("5.16.1", "5.22.2"),
    TF_QWEN3,
    "if self.sliding_window is not None and i >= self.max_window_layers",
)
FAM_QWEN3_MAX_WINDOW = Cite("transformers", ("5.16.1", "5.22.2"), TF_QWEN3, "max_window_layers: int = 28")
FAM_BEAM_NOT_CAUSAL = Cite("vllm", ("0.33.0", "0.34.0"), V_BEAM_NV, "assert not config.is_causal")
FAM_BEAM_SOFTCAP = Cite(
    "vllm", ("0.33.0", "0.34.0"), V_BEAM_NV, 'soft_cap=float(draft_config["final_logit_softcapping"]),'
)
FAM_BEAM_CONV_KEYS = Cite(
    "vllm",
    ("0.33.0", "0.34.0"),
    V_BEAM_NV,
    'taps=int(draft_config["conv_kernel_size"]),\n'
    '            group_size=int(draft_config["conv_group_size"]),',
)
FAM_BEAM_SELECTOR_KEYS = Cite(
    "vllm",
    ("0.33.0", "0.34.0"),
    V_BEAM_NV,
    'rank=int(draft_config["selector_rank"]),\n            top_k=int(draft_config["selector_top_k"]),',
)
FAM_BEAM_FC = Cite(
    "vllm", ("0.33.0", "0.34.0"), V_BEAM_NV, 'config.hidden_size * len(draft_config["target_layer_ids"]),'
)
FAM_BEAM_BARE_NAMES = Cite(
    "vllm",
    ("0.33.0", "0.34.0"),
    V_BEAM_NV,
    'loaded = {f"model.{name}" for name in self.model.load_weights(weights)}',
)
# the NVIDIA path (every platform but ROCm) reads none of the scales
FAM_BEAM_NV_NO_MULT = Cite("vllm", ("0.33.0", "0.34.0"), V_BEAM_NV, "output_multiplier", absent=True)
FAM_BEAM_NV_NO_EMBED_SCALE = Cite(
    "vllm", ("0.33.0", "0.34.0"), V_BEAM_NV, "input_embedding_scale", absent=True
)
FAM_BEAM_NV_NO_V_SCALE = Cite("vllm", ("0.33.0", "0.34.0"), V_BEAM_NV, "attention_value_scale", absent=True)
# 0.34.0 adds a ROCm path that reads them and defaults the softcapping (0.33.0 has none)
FAM_BEAM_ROCM = Cite("vllm", ("0.34.0",), "vllm/models/beam/__init__.py", "elif current_platform.is_rocm():")
FAM_BEAM_ROCM_ABSENT = Cite("vllm", ("0.33.0",), "vllm/models/beam/__init__.py", "is_rocm", absent=True)
FAM_BEAM_ROCM_SOFTCAP = Cite(
    "vllm", ("0.34.0",), V_BEAM_AMD, 'softcap = float(draft_config.get("final_logit_softcapping") or 0.0)'
)
FAM_BEAM_ROCM_MULT = Cite(
    "vllm", ("0.34.0",), V_BEAM_AMD, 'scale=float(draft_config.get("output_multiplier", 1.0)),'
)
FAM_BEAM_ROCM_EMBED = Cite("vllm", ("0.34.0",), V_BEAM_AMD, 'draft_config.get("input_embedding_scale", 1.0)')
FAM_BEAM_ROCM_V_SCALE = Cite(
    "vllm", ("0.34.0",), V_BEAM_AMD, 'self.v_scale = config.dflash_config.get("attention_value_scale")'
)

# --- XPress (0.33.0-): a DFlash v1 trunk plus the xpress_head refiner
FAM_XPRESS_REG = Cite(
    "vllm",
    ("0.33.0", "0.34.0"),
    V_REGISTRY,
    '"DFlashQwen3XPressModel": ("qwen3_xpress", "Qwen3XPressForCausalLM")',
)
FAM_XPRESS_REG_ABSENT = Cite("vllm", ("0.32.0",), V_REGISTRY, "XPress", absent=True)
FAM_XPRESS_KEYMAP = Cite("vllm", ("0.33.0", "0.34.0"), V_XPRESS, '"mix.L": "__raw_mix_L__",')
FAM_XPRESS_HEAD = Cite("vllm", ("0.33.0", "0.34.0"), V_XPRESS, "self.w1 = nn.Embedding(vocab_size, r)")
FAM_XPRESS_SIZES = Cite(
    "vllm",
    ("0.33.0", "0.34.0"),
    V_XPRESS,
    'rank=getattr(config, "xpress_rank", 256),\n'
    '            mlp_hidden=getattr(config, "xpress_mlp_hidden", 512),',
)
FAM_XPRESS_BLOCK = Cite(
    "vllm", ("0.33.0", "0.34.0"), V_XPRESS, 'or (getattr(config, "num_speculative_steps", 15) + 1),'
)
FAM_XPRESS_MIX_REQUIRED = Cite(
    "vllm", ("0.33.0",), V_XPRESS, 'raise ValueError("XPress checkpoint is missing xpress_head.mix.L")'
)
FAM_XPRESS_MIX_OPTIONAL = Cite("vllm", ("0.34.0",), V_XPRESS, "        if raw_mix_L is not None:")
FAM_XPRESS_FULL_VOCAB = Cite(
    "vllm",
    ("0.33.0", "0.34.0"),
    V_XPRESS,
    '"XPress currently requires a full-vocab draft (the refiner bias "',
)

# --- Laguna (0.25.0-): DFlashLagunaForCausalLM, Laguna decoder layers loaded by their own parameter names
FAM_LAGUNA_REG = Cite(
    "vllm",
    ("0.25.0", "0.34.0"),
    V_REGISTRY,
    '"DFlashLagunaForCausalLM": ("laguna_dflash", "DFlashLagunaForCausalLM")',
)
FAM_LAGUNA_REG_ABSENT = Cite("vllm", ("0.24.0",), V_REGISTRY, "DFlashLagunaForCausalLM", absent=True)
FAM_LAGUNA_LAYER_TYPES = Cite(
    "vllm", ("0.25.0", "0.34.0"), V_LAGUNA, 'raise ValueError("Laguna DFlash config requires `layer_types`.")'
)
FAM_LAGUNA_UNIFORM = Cite(
    "vllm", ("0.25.0", "0.34.0"), V_LAGUNA, '"Laguna DFlash drafter requires a uniform `layer_types` "'
)
FAM_LAGUNA_TAPS = Cite("vllm", ("0.25.0", "0.34.0"), V_LAGUNA, '"Laguna DFlash config requires non-empty "')
FAM_LAGUNA_DRAFT_VOCAB = Cite(
    "vllm",
    ("0.25.0", "0.34.0"),
    V_LAGUNA,
    'raise ValueError("Laguna DFlash config requires `draft_vocab_size`.")',
)
FAM_LAGUNA_VOCAB_MATCH = Cite(
    "vllm", ("0.25.0", "0.34.0"), V_LAGUNA, '"Laguna DFlash shares the target lm_head and requires "'
)
FAM_LAGUNA_AUX_NORMS = Cite("vllm", ("0.25.0", "0.34.0"), V_LAGUNA, "self.aux_hidden_norms = nn.ModuleList(")
FAM_LAGUNA_BY_NAME = Cite("vllm", ("0.25.0", "0.34.0"), V_LAGUNA, "            param = params_dict[name]")
FAM_LAGUNA_GATING = Cite(
    "vllm",
    ("0.25.0", "0.34.0"),
    V_MODELS + "laguna.py",
    'gate_per_head = self.gating is True or self.gating == "per-head"',
)

# --- the Muse-Glimmer assistant alias (0.28.0-): both names route to qwen3_dflash
FAM_MUSE_ALIAS = Cite(
    "vllm",
    ("0.28.0", "0.34.0"),
    V_REGISTRY,
    '"DFlashMuseGlimmerAssistantModel": ("qwen3_dflash", "DFlashQwen3ForCausalLM")',
)
FAM_MUSE_ALIAS_ABSENT = Cite("vllm", ("0.27.1",), V_REGISTRY, "MuseGlimmerAssistantModel", absent=True)

# the speculators flat mapping writes the plain architecture whatever the flat config names: a family
# architecture survives only in the nested dialect (no_rope_layers travels in transformer_layer_config)
FAM_FLAT_ARCH = Cite(
    "vllm",
    ("0.29.0", "0.34.0"),
    "vllm/transformers_utils/configs/speculators/algos.py",
    'pre_trained_config["architectures"] = ["DFlash2DraftModel"]',
)

# --- MoE DFlash2 drafters: no released DFlash2 model builds experts
FAM_MOE_ABSENT = Cite("vllm", ("0.34.0",), V_DFLASH2, "experts", absent=True)
