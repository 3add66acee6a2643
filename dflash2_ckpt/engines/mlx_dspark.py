"""mlx-dspark 0.20.3 (Apple MLX), as its released wheel loads a z-lab DFlash drafter (released_exl.py cites
each fact): DFlash v1 and, from the dflash_config selector / conv fields, DFlash2; nested dialect only."""

from __future__ import annotations

from . import quant as quant_rules
from . import released_exl as r
from .causality import CausalRule
from .profile import Drafter, Profile, Refusal
from .profile import fact as _fact
from .versions import at_least

RANK = 80

# the draft model's parameter roots (DFlashDraftModel: fc, hidden_norm, layers, norm, candidate_selector)
ROOTS = ("fc.", "hidden_norm.", "layers.", "norm.", "candidate_selector.")
TOP_LEVEL = (
    "hidden_size",
    "num_hidden_layers",
    "num_attention_heads",
    "num_key_value_heads",
    "head_dim",
    "intermediate_size",
    "vocab_size",
    "rms_norm_eps",
    "max_position_embeddings",
    "num_target_layers",
)


# a causal (windowed) mask on sliding layers, none on the others; no causality key is read
causality = CausalRule((), dialects=frozenset({"nested"}))


def _keys(d: Drafter) -> str | None:
    missing = [k for k in TOP_LEVEL if k not in d.config]
    dc = d.config.get("dflash_config")
    dc = dc if isinstance(dc, dict) else {}
    if dc.get("block_size") is None and d.config.get("block_size") is None:
        missing.append("block_size")
    if not dc.get("target_layer_ids") and "target_layer_ids" not in d.config:
        missing.append("target_layer_ids")
    return f"its loader indexes top-level {', '.join(missing)} (KeyError)" if missing else None


def _names(d: Drafter) -> str | None:
    """The loader compares the stored names with the model's parameters and raises on any difference."""
    odd = sorted(
        n
        for n in d.tensors
        if not n.startswith(ROOTS) or n.endswith(".bias") or n.endswith((".attention_sink_bias", ".sinks"))
    )
    if not odd:
        return None
    more = f" and {len(odd) - 5} more" if len(odd) > 5 else ""
    return f"tensor names don't match a z-lab DFlash drafter: {', '.join(odd[:5])}{more} (ValueError)"


def _v2_keys(d: Drafter) -> str | None:
    dc = d.config.get("dflash_config")
    dc = dc if isinstance(dc, dict) else {}
    archs = d.config.get("architectures")
    if (
        isinstance(archs, list)
        and "DFlash2DraftModel" in archs
        and not (dc.get("selector_rank") and dc.get("selector_top_k"))
    ):
        return (
            "architectures says DFlash2DraftModel but dflash_config carries no selector_rank/selector_top_k"
        )
    return None


PROFILE = Profile(
    engine="mlx-dspark",
    label="mlx-dspark",
    versions=at_least("0.20.3", "release"),
    drafts=frozenset({"v1", "v2"}),
    reads=frozenset({"nested"}),
    version_by="fields: dflash_config.selector_rank / conv_kernel_size switch the DFlash2 parts on",
    causality=causality,
    taps="dflash_config.target_layer_ids (else the top-level one), as written",
    draft_tokens=None,
    verify_default=False,
    sources=(
        _fact(
            "DFlash v1 and DFlash2 (the selector and convs config-gated by dflash_config fields); a "
            "DFlash2DraftModel without selector keys is refused",
            r.DSPARK_V2,
            r.DSPARK_V2_REFUSE,
        ),
        _fact(
            "model args from top-level keys (KeyError when missing), block_size from dflash_config or the "
            "top level",
            r.DSPARK_KEYS,
            r.DSPARK_TARGET_LAYERS,
            r.DSPARK_BLOCK,
        ),
        _fact("stored tensor names must equal the model's parameters", r.DSPARK_STRICT),
        _fact(
            "in-block attention: a causal (windowed) mask on sliding layers, none on the others; is_causal "
            "and dflash_config.causal are not read",
            r.DSPARK_MASK,
            r.DSPARK_NO_IS_CAUSAL,
            r.DSPARK_NO_IS_CAUSAL_MODEL,
        ),
        _fact("reads a nested config only (no transformer_layer_config)", r.DSPARK_NO_FLAT),
    ),
    requires=(
        Refusal("top-level keys", _keys, str(r.DSPARK_KEYS), "DF803"),
        Refusal("DFlash2 selector keys", _v2_keys, str(r.DSPARK_V2_REFUSE), "DF803"),
    ),
    constraints=(Refusal("strict names", _names, str(r.DSPARK_STRICT), "DF805"),),
    quant=quant_rules.refuse_all("mlx-dspark", str(r.DSPARK_STRICT)),
)

PROFILES = (PROFILE,)

# compat on every fixtures/real config, checked by hand against the cited code (tests/engines/test_golden.py)
GOLDEN = (
    ("z-lab_Qwen3.8-27B-DFlash2", PROFILE.id, "degraded", ("DF808",)),  # sliding => causal mask
    ("z-lab_Muse-Glimmer-30B-DFlash2", PROFILE.id, "degraded", ("DF808",)),  # whatever is_causal says
    ("z-lab_Qwen3-4B-DFlash-b16", PROFILE.id, "loads", ()),  # full layers: no mask
    (
        "speculators-0.9.0_tiny-dflash2",
        PROFILE.id,
        "fails",
        ("DF814", "DF803", "DF808"),
    ),  # no num_target_layers
    ("deepseek-ai_dspark_qwen3_8b_block7", PROFILE.id, "unsupported", ("DF800",)),  # not a DFlash drafter
)
