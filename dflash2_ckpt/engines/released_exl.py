"""Citations of exllamav3, mlx-dspark, lmdeploy and mistralrs (released.py re-exports every one, so
tests/engines/test_released.py checks each against its wheel like the others)."""

from __future__ import annotations

from .profile import Cite

# --- exllamav3 (pure-Python wheel; the CUDA kernels build separately) --------------------------------------
_EXL = ("exllamav3", ("1.6.5",))
X_ARCH = "exllamav3/architecture/"
X_V1 = X_ARCH + "dflash.py"
X_V2 = X_ARCH + "dflash2.py"
X_LAGUNA = X_ARCH + "dflash_laguna.py"
X_ASSISTANT = X_ARCH + "muse_glimmer_assistant.py"
X_CONFIG = "exllamav3/model/config.py"
X_READ = "exllamav3/util/file.py"
X_LINEAR = "exllamav3/modules/linear.py"

# the four DFlash architectures it registers, each a config class picked by config.json's architectures
EXL_V1 = Cite(*_EXL, X_V1, 'arch_string = "DFlashDraftModel"')
EXL_V2 = Cite(*_EXL, X_V2, 'arch_string = "DFlash2DraftModel"')
EXL_LAGUNA = Cite(*_EXL, X_LAGUNA, 'arch_string = "DFlashLagunaForCausalLM"')
EXL_ASSISTANT = Cite(*_EXL, X_ASSISTANT, 'arch_string = "MuseGlimmerAssistantModel"')
EXL_ASSISTANT_KEYS = Cite(*_EXL, X_ASSISTANT, 'key_fc = "encoder.fc"')
EXL_REGISTERED = Cite(
    *_EXL,
    X_ARCH + "architectures.py",
    "        DFlashModel,\n        DFlash2Model,\n        DFlashLagunaModel,",
)
EXL_ARCH_PICKS = Cite(
    *_EXL, X_CONFIG, 'assert arch in architectures, f"Unknown architecture {arch} in {config_filename}"'
)
# a speculators-trained (flat) config names DFlashDraftModel too, but keeps hidden_size under
# transformer_layer_config: the top-level read has no default and raises
EXL_FLAT_TODO = Cite(*_EXL, X_V1, "# TODO: Support DFlash models trained in Speculators")
EXL_HIDDEN_REQUIRED = Cite(*_EXL, X_V1, 'self.hidden_size = self.read_cfg(int, "hidden_size", no_default)')
EXL_MISSING_KEY = Cite(*_EXL, X_READ, 'raise ValueError(f"Missing any of the following keys: {keys}")')
# read_dict treats a null value as absent: "sliding_window": null gets the default
EXL_NULL_IS_MISSING = Cite(*_EXL, X_READ, "x = input_dict_s.get(key, None)\n        if x is not None:")
EXL_ROPE_THETA = Cite(*_EXL, X_CONFIG, "default_rope_theta: float = 10000.0,")
EXL_ACT = Cite(*_EXL, X_V1, 'self.assert_cfg(str, "hidden_act", "silu", True)')

# causality: top-level is_causal, else dflash_config.is_causal; unset: sliding layers causal, others not
EXL_CAUSAL = Cite(
    *_EXL, X_V1, 'self.is_causal = self.read_cfg(bool, ["is_causal", "dflash_config->is_causal"], None)'
)
EXL_CAUSAL_WINDOW = Cite(*_EXL, X_V1, "causal = True if self.is_causal is None else self.is_causal")
EXL_CAUSAL_FLAG = Cite(*_EXL, X_V1, 'params["causal"] = self.config.is_causal is True')
EXL_CAUSAL_FLAG_V2 = Cite(*_EXL, X_V2, 'params["causal"] = self.config.is_causal is True')
EXL_NO_DFLASH_CAUSAL = Cite(*_EXL, X_V1, "dflash_config->causal", absent=True)
EXL_NO_DFLASH_CAUSAL_V2 = Cite(*_EXL, X_V2, "dflash_config->causal", absent=True)
EXL_LAGUNA_CAUSAL = Cite(
    *_EXL, X_LAGUNA, 'self.dflash_causal = self.read_cfg(bool, "dflash_config->causal", True)'
)
EXL_LAGUNA_NO_IS_CAUSAL = Cite(*_EXL, X_LAGUNA, "is_causal", absent=True)

# taps: exllamav3 exports the OUTPUT of layer j; v1 (DFlashDraftModel) shifts the ids one layer deeper
EXL_TAP_SHIFT_V1 = Cite(
    *_EXL,
    X_V1,
    "    # OUTPUT of layer j). The original DFlash release needs +1 (determined "
    "empirically); variants\n    # whose reference uses hidden_states[i + 1] (output of layer i) "
    "use raw ids\n    tap_shift = 1\n",
)
EXL_TAP_SHIFT_KEY = Cite(
    *_EXL,
    X_V1,
    'self.tap_shift = self.read_cfg(int, ["dflash_config->tap_shift", "tap_shift"], self.tap_shift)',
)
EXL_TAP_APPLIED = Cite(
    *_EXL, X_V1, "self.target_layer_ids = [i + self.tap_shift for i in self.target_layer_ids]"
)
EXL_TAP_PER_CHECKPOINT = Cite(
    *_EXL, X_V1, "# The offset is per checkpoint and not derivable from the config: gemma4-31b-it-dflash"
)
EXL_TAPS_UNIQUE = Cite(*_EXL, X_V1, '"DFlash target_layer_ids must be unique"')
EXL_TAP_SHIFT_V2 = Cite(
    *_EXL,
    X_V2,
    "    # Reference extract uses hidden_states[id + 1] == output of layer id\n    tap_shift = 0\n",
)
EXL_TAP_SHIFT_ASSISTANT = Cite(*_EXL, X_ASSISTANT, "    tap_shift = 0\n")
EXL_LAGUNA_RAW_TAPS = Cite(
    *_EXL, X_LAGUNA, "# DFlash. target_layer_ids are used RAW: id i means the output of target layer i"
)
EXL_V2_TAPS_IN_TARGET = Cite(
    *_EXL, X_V2, '"DFlash2 target_layer_ids contains a layer outside the target model"'
)

# keys and their defaults
EXL_TAPS_KEY = Cite(*_EXL, X_V1, '["dflash_config->target_layer_ids", "target_layer_ids"], no_default')
EXL_MASK = Cite(*_EXL, X_V1, '["dflash_config->mask_token_id", "mask_token_id"], no_default')
EXL_BLOCK = Cite(
    *_EXL,
    X_V1,
    'self.block_size = self.read_cfg(int, ["block_size", "dflash_config->block_size"], no_default)',
)
EXL_LAYER_TYPES = Cite(
    *_EXL,
    X_V1,
    'self.layer_types = self.read_cfg(list, "layer_types", ["full_attention"] * self.num_hidden_layers)',
)
EXL_WINDOW = Cite(*_EXL, X_V1, 'self.sliding_window = self.read_cfg(int, "sliding_window", 2048)')
EXL_SINKS = Cite(
    *_EXL,
    X_V1,
    '["dflash_config->attention_sink_bias", "attention_sink_bias", "add_swa_attention_sink_bias"],',
)
EXL_SINKS_TENSOR = Cite(
    *_EXL, X_V1, 'self.attention_sink_bias = self.stc.has_tensor("layers.0.self_attn.attention_sink_bias")'
)
EXL_V_SCALE = Cite(
    *_EXL, X_V1, 'float, ["dflash_config->attention_value_scale", "attention_value_scale"], None'
)
EXL_V_SCALE_APPLIED = Cite(*_EXL, X_V1, "attn.o_proj.weight_scale = config.attention_value_scale")
EXL_MASK_EMBEDDING = Cite(
    *_EXL,
    X_V1,
    'self.key_mask_embedding = "mask_embedding" if self.stc.has_tensor("mask_embedding") else None',
)
EXL_MASK_EMBEDDING_USED = Cite(*_EXL, X_V1, "key_mask_embedding = config.key_mask_embedding,")
# the DFlash2 model reads the same config (it subclasses DFlashConfig) but builds no sinks, no V scale and
# no learned mask embedding
EXL_NO_USE_SWA = Cite(*_EXL, X_V1, "use_swa", absent=True)
EXL_NO_USE_SWA_V2 = Cite(*_EXL, X_V2, "use_swa", absent=True)
EXL_V2_NO_SINKS = Cite(*_EXL, X_V2, "key_sinks", absent=True)
EXL_V2_NO_V_SCALE = Cite(*_EXL, X_V2, "weight_scale", absent=True)
EXL_V2_NO_MASK_EMBEDDING = Cite(*_EXL, X_V2, "key_mask_embedding", absent=True)
EXL_V2_SCALES = Cite(
    *_EXL, X_V2, '[float, int], ["dflash_config->input_embedding_scale", "input_embedding_scale"], 1.0))'
)
EXL_V2_MULTIPLIER = Cite(
    *_EXL, X_V2, '[float, int], ["dflash_config->output_multiplier", "output_multiplier"], 1.0))'
)
EXL_V2_SOFTCAP = Cite(
    *_EXL, X_V2, '[float, int], ["dflash_config->final_logit_softcapping", "final_logit_softcapping"], 0.0))'
)
EXL_V2_SELECTOR = Cite(*_EXL, X_V2, 'int, ["dflash_config->selector_rank", "selector_rank"], no_default)')
EXL_V2_CONV_DEFAULTS = Cite(*_EXL, X_V2, 'int, ["dflash_config->conv_kernel_size", "conv_kernel_size"], 2)')
EXL_V2_TOP_K = Cite(*_EXL, X_V2, '"DFlash2 selector_top_k must be between 1 and vocab_size"')
EXL_V2_KERNEL = Cite(*_EXL, X_V2, '"DFlash2 conv_kernel_size must be positive and no larger than block_size"')
EXL_V2_GROUP = Cite(*_EXL, X_V2, '"DFlash2 hidden_size must be divisible by a positive conv_group_size"')
EXL_V2_VOCAB = Cite(*_EXL, X_V2, 'f"DFlash2 vocabulary size {self.config.vocab_size} does not match "')
EXL_VOCAB_READ = Cite(
    *_EXL, X_CONFIG, 'self.vocab_size = self.read_cfg(int, ["vocab_size", "text_config->vocab_size"], None)'
)

# Laguna: per-head softplus gate, uniform layer types, the target's vocabulary, fused qkv
EXL_LAGUNA_GATING = Cite(*_EXL, X_LAGUNA, 'self.assert_cfg(str, "gating", "per-head")')
EXL_LAGUNA_UNIFORM = Cite(*_EXL, X_LAGUNA, '"DFlashLaguna: drafter requires a uniform layer_types"')
EXL_LAGUNA_VOCAB = Cite(*_EXL, X_LAGUNA, '"DFlashLaguna: draft_vocab_size must match the model vocab_size"')
EXL_LAGUNA_EAGLE = Cite(
    *_EXL,
    X_LAGUNA,
    '"DFlashLaguna: eagle_aux_hidden_state_layer_ids inconsistent with dflash_config.target_layer_ids"',
)
EXL_LAGUNA_FUSED = Cite(*_EXL, X_LAGUNA, 'key_fused_qkv = "qkv_proj",')
EXL_LAGUNA_AUX_NORMS = Cite(*_EXL, X_LAGUNA, 'key_aux_norms = "aux_hidden_norms",')

# quantization: an EXL3 trellis, else a dense .weight (fp8 scales dequantized, converted to fp16), else raise
EXL_LOAD_ORDER = Cite(
    *_EXL,
    X_LINEAR,
    "if any(self.load_exl3(k) for k in keys): return\n"
    "        if any(self.load_fp16(k) for k in keys): return",
)
EXL_NO_FORMAT = Cite(
    *_EXL,
    X_LINEAR,
    'raise ValueError(f"No tensors found for {self.key} matching supported quantization format.")',
)
EXL_TRELLIS = Cite(*_EXL, X_LINEAR, '[["sv", "svh"], ["su", "suh"], "trellis"]')
EXL_FP8_SCALES = Cite(*_EXL, X_LINEAR, "weight = self.apply_fp8_scales_inv_(weight, scale_inv)")
EXL_TO_FP16 = Cite(
    *_EXL, X_LINEAR, 'weight = self.config.stc.get_tensor(key + ".weight", dev, float2half = True'
)

# running it: a Python library; the draft model goes to the Generator, which drafts block_size - 1 tokens
EXL_GENERATOR = Cite(
    *_EXL,
    "exllamav3/generator/generator.py",
    "Draft model. Enables speculative decoding with draft, and must be specified along with",
)
EXL_DRAFT_TOKENS = Cite(
    *_EXL,
    "exllamav3/generator/generator.py",
    'self.num_draft_tokens = draft_model.caps.get("default_draft_size", 4)',
)
EXL_DRAFT_SIZE = Cite(*_EXL, X_V1, '"default_draft_size": config.block_size - 1,')
EXL_DRAFT_ARGS = Cite(
    *_EXL,
    "exllamav3/model_init.py",
    'parser.add_argument("-dm", "--draft_model_dir", type = str, '
    'help = "Path to draft model directory", default = None)',
)

# --- mlx-dspark -----------------------------------------------------------------------------------------
_DSPARK = ("mlx-dspark", ("0.20.3",))
D_MODEL = "mlx_dspark/dflash_model.py"
D_LOAD = "mlx_dspark/load.py"
DSPARK_V2 = Cite(
    *_DSPARK,
    D_MODEL,
    "Both are config-gated (``dflash_config.selector_rank`` / ``conv_kernel_size``); "
    "DFlash 1\ncheckpoints load and run byte-identically to before.",
)
DSPARK_V2_REFUSE = Cite(
    *_DSPARK, D_LOAD, 'f"{repo_or_path}: architectures says DFlash2DraftModel but dflash_config carries no "'
)
DSPARK_KEYS = Cite(
    *_DSPARK, D_LOAD, 'hidden_size=cfg["hidden_size"], num_hidden_layers=cfg["num_hidden_layers"],'
)
DSPARK_TARGET_LAYERS = Cite(*_DSPARK, D_LOAD, 'num_target_layers=cfg["num_target_layers"],')
DSPARK_BLOCK = Cite(*_DSPARK, D_LOAD, 'block_size = dfc.get("block_size", cfg.get("block_size"))')
DSPARK_STRICT = Cite(*_DSPARK, D_LOAD, 'f"{repo_or_path}: tensor names don\'t match a z-lab DFlash drafter."')
# in-block attention: sliding layers get a causal mask, other layers none; no causality key is read
DSPARK_MASK = Cite(*_DSPARK, D_MODEL, '"causal" if ctx_len + L <= self.sliding_window')
DSPARK_NO_IS_CAUSAL = Cite(*_DSPARK, D_LOAD, "is_causal", absent=True)
DSPARK_NO_IS_CAUSAL_MODEL = Cite(*_DSPARK, D_MODEL, "is_causal", absent=True)
DSPARK_NO_FLAT = Cite(*_DSPARK, D_LOAD, "transformer_layer_config", absent=True)

# --- lmdeploy -------------------------------------------------------------------------------------------
_LMD = ("lmdeploy", ("0.18.0",))
L_MAP = "lmdeploy/pytorch/models/module_map.py"
L_MODEL = "lmdeploy/pytorch/models/qwen3_dflash.py"
L_UTILS = "lmdeploy/pytorch/spec_decode/dflash_utils.py"
LMDEPLOY_V1 = Cite(
    *_LMD,
    L_MAP,
    "MODULE_MAP.update({'DFlashDraftModel': f'{LMDEPLOY_PYTORCH_MODEL_PATH}.qwen3_dflash.DFlashDraftModel'})",
)
LMDEPLOY_NO_V2 = Cite(*_LMD, L_MAP, "DFlash2", absent=True)
# causality: dflash_config.causal, else a top-level causal, else sliding layers causal; is_causal unread
LMDEPLOY_CAUSAL = Cite(
    *_LMD, L_MODEL, "causal_override = config.dflash_config.get('causal', getattr(config, 'causal', None))"
)
LMDEPLOY_CAUSAL_DEFAULT = Cite(*_LMD, L_MODEL, "default_causal = layer_type == _SLIDING_ATTENTION")
LMDEPLOY_NO_IS_CAUSAL = Cite(*_LMD, L_MODEL, "is_causal", absent=True)
LMDEPLOY_LAYER_TYPES = Cite(
    *_LMD, L_UTILS, "raise ValueError('DFlash V1 requires an explicit layer_types list.')"
)
LMDEPLOY_TAPS_ORDER = Cite(*_LMD, L_UTILS, "must be strictly increasing and duplicate-free; got {layer_ids}.")

# --- mistralrs ------------------------------------------------------------------------------------------
# the wheel is a compiled extension and type stubs; PyPI has no source distribution of 0.9.5
_MRS = ("mistralrs", ("0.9.5",))
MISTRALRS_COMPILED = Cite(*_MRS, "mistralrs-0.9.5.dist-info/RECORD", "mistralrs/mistralrs.abi3.so,")
MISTRALRS_NO_SOURCE = Cite(*_MRS, "mistralrs-0.9.5.dist-info/RECORD", ".rs,", absent=True)
