"""MLX engines: dflash-mlx (DFlash2) and mlx-vlm before its DFlash2 support (DFlash v1)."""
from __future__ import annotations

from . import causality
from .profile import Default, Drafter, Fact, Profile, Refusal
from .versions import unversioned

DFLASH_MLX = "bstnxbt/dflash-mlx:dflash_mlx/draft/dflash2.py@1fe76ec9"
MLX_VLM = "Blaizzy/mlx-vlm@9b13f522"
SEVEN_KEYS = ("block_size", "conv_group_size", "conv_kernel_size", "mask_token_id", "selector_rank",
              "selector_top_k", "target_layer_ids")
FIXED = {"conv_kernel_size": 2, "conv_group_size": 16, "selector_rank": 256, "selector_top_k": 16}
CODEBOOKS = ("candidate_selector.predecessor_codebook", "candidate_selector.successor_codebook")


def _seven_keys(d: Drafter) -> str | None:
    dc = d.config.get("dflash_config")
    missing = [k for k in SEVEN_KEYS if not isinstance(dc, dict) or k not in dc]
    return f"dflash_config lacks {', '.join(missing)}" if missing else None


def _is_causal_false(d: Drafter) -> str | None:
    return None if d.config.get("is_causal") is False else \
        f"is_causal must be literally false (found {d.config.get('is_causal', 'no key')!r})"


def _all_sliding(d: Drafter) -> str | None:
    if d.spec is None or all(t == "sliding_attention" for t in d.spec.layer_types):
        return None
    return f"every layer must be sliding_attention (layer_types = {list(d.spec.layer_types)})"


def _fixed_geometry(d: Drafter) -> str | None:
    if d.spec is None:
        return None
    bad = [f"{k} = {getattr(d.spec, k)} (needs {v})" for k, v in FIXED.items() if getattr(d.spec, k) != v]
    return "fixed geometry T=2, group 16, rank 256, top-k 16: " + ", ".join(bad) if bad else None


def _no_lm_head(d: Drafter) -> str | None:
    heads = sorted(t for t in d.tensors if t.startswith("lm_head."))
    return f"refuses a draft lm_head ({', '.join(heads)})" if heads else None


def _codebook_forms(d: Drafter) -> str | None:
    both = [c for c in CODEBOOKS if c in d.tensors and c + ".weight" in d.tensors]
    return f"renames the bare codebooks to ....weight and fails when both exist ({', '.join(both)})" if both else None


DFLASH_MLX_PROFILE = Profile(
    engine="dflash-mlx", label="dflash-mlx", versions=unversioned(">= #56"),
    drafts=frozenset({"v2"}), reads=frozenset({"nested"}),
    version_by="architecture (needs DFlash2DraftModel)",
    causality=causality.all_bidirectional,
    causality_text="bidirectional; loads only is_causal: false with every layer sliding",
    taps="dflash_config.target_layer_ids (0-based)",
    draft_tokens=None,
    sources=(Fact("needs DFlash2DraftModel, seven dflash_config keys, is_causal literally false, every layer "
                  "sliding, exactly T=2, group 16, rank 256, top-k 16; refuses any draft lm_head.*; renames the "
                  "bare codebooks to ....weight and fails if both forms exist", DFLASH_MLX),),
    requires=(Refusal("dflash_config keys", _seven_keys, DFLASH_MLX, "DF803"),),
    constraints=(Refusal("is_causal false", _is_causal_false, DFLASH_MLX),
                 Refusal("all layers sliding", _all_sliding, DFLASH_MLX),
                 Refusal("fixed conv / selector geometry", _fixed_geometry, DFLASH_MLX),
                 Refusal("no draft lm_head", _no_lm_head, DFLASH_MLX, "DF805"),
                 Refusal("one codebook form", _codebook_forms, DFLASH_MLX, "DF805")),
    notes=(Fact("drafts at most min(5, block_size) tokens per step", DFLASH_MLX),),
)

MLX_VLM_PROFILE = Profile(
    engine="mlx-vlm", label="mlx-vlm", versions=unversioned("before DFlash2 support"),
    drafts=frozenset({"v1"}), reads=frozenset({"nested"}),
    version_by="no DFlash2",
    causality=None,
    causality_text="not documented (not modelled)",
    taps="dflash_config.target_layer_ids (0-based); defaulted when missing",
    draft_tokens=None,
    sources=(Fact("silently defaults mask_token_id=248070, target_layer_ids=[1,8,15,22,29], block_size=16; "
                  "ignores a nested dflash_config.block_size", MLX_VLM),),
    defaults=(Default("mask_token_id", 248070, MLX_VLM, why="a wrong mask id drafts from the wrong embedding"),
              Default("target_layer_ids", (1, 8, 15, 22, 29), MLX_VLM,
                      why="fc is fed hidden states it was not trained on"),
              Default("block_size", 16, MLX_VLM, reads=("block_size",),
                      why="it ignores dflash_config.block_size and drafts blocks of 16")),
)

PROFILES = (DFLASH_MLX_PROFILE, MLX_VLM_PROFILE)
