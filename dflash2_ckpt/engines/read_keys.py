"""Config keys the schema does not model that an engine release nevertheless reads (nested and assistant
dialects: the same loader classes), each with the releases that read it and what it does there.

An unknown key listed here is reported as DF121 (read by these engines, not checked here) instead of DF116
(no engine reads it). Audited against vLLM 0.27.1..0.33.0, SGLang 0.5.18..0.5.23, mlx-vlm 0.6.0..0.7.10 and
transformers 5.15..5.24 (whose assistant configs read no key beyond the schema); a top-level target_layer_ids
beside the required dflash_config one stays DF116, as every reader takes dflash_config's first. MiMo's
attention keys are modelled (formats/nested.py) and judged per release (attention_keys.py). In the flat
dialect vLLM's speculators mapping
builds the drafter config from transformer_layer_config plus a fixed list of top-level keys, so only the
former carries a key vLLM reads; a flat top-level key is indeed unread.
"""
from __future__ import annotations

from dataclasses import dataclass

from . import released as r, released_exl as x
from .profile import Cite


@dataclass(frozen=True)
class ReadKey:
    readers: str                   # the engine releases that read it
    effect: str                    # what it changes there
    cites: tuple[Cite, ...]
    checked: str = ""              # where this toolkit does check it (the finding that judges it), if it does

    @property
    def source(self) -> str:
        return "; ".join(str(c) for c in self.cites)


_DOMINO = ReadKey("SGLang 0.5.20 and later", "configures the Domino projector (prefix GRU, embedding projection)",
                  (r.SGLANG_DOMINO_KEYS, r.SGLANG_DOMINO_GRU))
_AUX = ReadKey("vLLM", "false feeds the drafter no target hidden states", (r.VLLM_DRAFTER_CONFIG, r.VLLM_AUX_HIDDEN))
_NEOX = ReadKey("vLLM 0.28.0 and later, SGLang", "the RoPE layout of the drafter's q / k (false: interleaved "
               "pairs)", (r.VLLM_NEOX, r.SGLANG_NEOX))
_SINK_FALLBACK = ReadKey("vLLM", "builds attention sinks when dflash_config.attention_sink_bias is absent",
                         (r.VLLM_SINK_FALLBACK,))
_MASK_TOKEN = ReadKey("SGLang", "the mask token's text, looked up in the tokenizer when mask_token_id is absent",
                      (r.SGLANG_MASK_TOKEN,))

def reader_of(path: str, dialect: str | None) -> ReadKey | None:
    """Who reads this unmodelled config path of a drafter of this dialect (a flat config's top level: nobody)."""
    flat_path = path.startswith("transformer_layer_config.")
    return READ_KEYS.get(path) if flat_path == (dialect == "flat") else None


# config path (top level, or dflash_config.KEY) -> who reads it
READ_KEYS: dict[str, ReadKey] = {
    "dflash_config.use_aux_hidden_state": _AUX,
    "use_aux_hidden_state": _AUX,
    "is_neox_style": _NEOX,
    "rope_is_neox_style": ReadKey("SGLang", "the RoPE layout of the drafter's q / k, read before is_neox_style",
                                  (r.SGLANG_NEOX,)),
    "add_swa_attention_sink_bias": _SINK_FALLBACK,
    "dflash_config.mask_token": _MASK_TOKEN,
    "mask_token": _MASK_TOKEN,
    "dflash_config.num_target_layers": ReadKey("SGLang, mlx-vlm 0.7.0 and later", "the target depth, read before "
                                               "the top-level num_target_layers (SGLang spreads guessed taps over it)",
                                               (r.SGLANG_NUM_TARGET_LAYERS, r.MLXVLM_NUM_TARGET_LAYERS)),
    **{f"{where}{k}": ReadKey("mlx-vlm", effect, (cite, r.MLXVLM_CONFIG_FIELDS))
       for k, effect, cite in (("runtime_block_size", "the block it drafts at run time", r.MLXVLM_RUNTIME_BLOCK),
                               ("draft_window_size", "a rotating draft KV cache of that many positions",
                                r.MLXVLM_DRAFT_WINDOW))
       for where in ("", "dflash_config.")},
    # mlx-vlm's DFlash v1 config takes every top-level key that is one of its fields
    "final_logit_softcapping": ReadKey("mlx-vlm (DFlash v1)", "caps the draft logits (the other engines read "
                                       "dflash_config.final_logit_softcapping)",
                                       (r.MLXVLM_TOP_SOFTCAP, r.MLXVLM_CONFIG_FIELDS)),
    "attention_sink_bias": ReadKey("mlx-vlm 0.7.0 and later (DFlash v1)", "builds attention sinks when "
                                   "dflash_config.attention_sink_bias is absent",
                                   (r.MLXVLM_TOP_SINKS, r.MLXVLM_CONFIG_FIELDS)),
    "dflash_query_causal": ReadKey("mlx-vlm 0.7.0 and later", "the draft block's causality when "
                                   "dflash_config.causal is absent", (r.MLXVLM_QUERY_CAUSAL,)),
    "use_gemma_norm": ReadKey("SGLang 0.5.23 and later", "builds Gemma-style RMSNorm (1 + weight) layers",
                              (r.SGLANG_GEMMA_NORM, r.SGLANG_NO_GEMMA_NORM)),
    # flat: transformer_layer_config is the base of the config vLLM builds (speculators/base.py)
    "transformer_layer_config.is_neox_style": ReadKey("vLLM 0.28.0 and later", _NEOX.effect, (r.VLLM_NEOX,
                                                                                             r.VLLM_FLAT_BASE)),
    "transformer_layer_config.add_swa_attention_sink_bias": ReadKey("vLLM", _SINK_FALLBACK.effect,
                                                                    (r.VLLM_SINK_FALLBACK, r.VLLM_FLAT_BASE)),
    "transformer_layer_config.use_aux_hidden_state": ReadKey("vLLM", _AUX.effect, (r.VLLM_AUX_HIDDEN, r.VLLM_FLAT_BASE)),
    # exllamav3 (DFlash v1 / DFlash2 / the assistant export): read after the top-level is_causal
    "dflash_config.is_causal": ReadKey("exllamav3", "the draft block's causality for every layer when the top-level "
                                       "is_causal is absent (no other engine reads it)", (x.EXL_CAUSAL,),
                                       checked="DF401 and compat judge exllamav3's causality with it"),
    **{f"{where}tap_shift": ReadKey("exllamav3", "how many layers deeper than target_layer_ids it taps "
                                    "(dflash_config first; DFlashDraftModel defaults to 1, DFlash2 to 0)",
                                    (x.EXL_TAP_SHIFT_KEY, x.EXL_TAP_APPLIED),
                                    checked="DF404 (verify --engine exllamav3) and compat's DF840")
       for where in ("", "dflash_config.")},
    "attention_value_scale": ReadKey("exllamav3 (DFlash v1)", "V scale folded into o_proj when "
                                     "dflash_config.attention_value_scale is absent", (x.EXL_V_SCALE,
                                                                                       x.EXL_V_SCALE_APPLIED)),
    **{f"{where}{k}": _DOMINO for k in ("projector_type", "emb_dim", "shift_label", "gru_hidden_dim",
                                         "pure_draft_prefix_len") for where in ("", "dflash_config.")},
}
