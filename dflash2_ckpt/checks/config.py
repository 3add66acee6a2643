"""DF1xx: what opening found in config.json (formats/findings.py writes those), then the cross-field
rules of docs/contract.md#dflash_config, written once on the DraftSpec and reported at each dialect's
JSON path.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ..findings import Finding
from ..formats.spec import DraftSpec
from .engine_keys import engine_read_key

if TYPE_CHECKING:
    from .context import CheckContext

EMITS: frozenset[str] = frozenset(
    {
        "DF103",
        "DF104",
        "DF105",
        "DF106",
        "DF107",
        "DF108",
        "DF109",
        "DF110",
        "DF111",
        "DF112",
        "DF113",
        "DF114",
        "DF115",
        "DF118",
        "DF119",
        "DF120",
    }
)


def check(ctx: CheckContext) -> list[Finding]:
    """What reading and parsing config.json found, then the cross-field rules on the parsed spec."""
    ckpt = ctx.checkpoint
    dialect = ckpt.detection.dialect if ckpt.detection is not None else None
    out = [engine_read_key(f, dialect) for f in ckpt.config_findings]
    if ckpt.spec is not None and ckpt.config is not None:
        out += spec_rules(ckpt.spec, ckpt.config)
        out += _borrowed_vocab(ckpt.spec)
    return out


def _borrowed_vocab(spec: DraftSpec) -> list[Finding]:
    """DF120: no vocab_size (the assistant export borrows the target's embedding and head)."""
    if spec.vocab_from == "target":
        return [
            Finding(
                "DF120",
                f"no vocab_size: the drafter borrows the target's embedding and head; judged "
                f"with the target's vocabulary ({spec.vocab_size})",
                severity="info",
                field="vocab_size",
                details={"vocab_size": spec.vocab_size, "from": "target"},
            )
        ]
    if spec.vocab_from == "bound":
        return [
            Finding(
                "DF120",
                f"no vocab_size: the drafter borrows the target's embedding and head; judged "
                f"with the smallest vocabulary its mask and special token ids allow ({spec.vocab_size}). "
                "Pass --target for the target's own",
                field="vocab_size",
                details={"vocab_size": spec.vocab_size, "from": "bound"},
            )
        ]
    return []


# --- cross-field rules on the DraftSpec --------------------------------------------------------------


def _block_size_conflict(config: Mapping[str, Any]) -> Finding | None:
    dc = config.get("dflash_config")
    if not isinstance(dc, dict):
        return None
    top, inner = config.get("block_size"), dc.get("block_size")
    if top is not None and inner is not None and top != inner:
        return Finding(
            "DF112",
            f"block_size = {top} at the top level but dflash_config.block_size = {inner}; "
            "engines read different ones. Keep one value (dflash_config.block_size)",
            field="block_size",
            details={"top": top, "dflash_config": inner},
        )
    return None


def spec_rules(spec: DraftSpec, config: Mapping[str, Any]) -> list[Finding]:
    out: list[Finding] = []
    P = spec.path

    def add(code: str, name: str, msg: str, **details: Any) -> None:
        out.append(Finding(code, msg, field=P(name), details=details))

    if spec.num_attention_heads % spec.num_key_value_heads:
        add(
            "DF118",
            "num_key_value_heads",
            f"{P('num_key_value_heads')} = {spec.num_key_value_heads} does not divide "
            f"num_attention_heads = {spec.num_attention_heads}; grouped-query attention cannot be built",
            kv_heads=spec.num_key_value_heads,
            heads=spec.num_attention_heads,
        )
    if spec.hidden_act != "silu":
        add(
            "DF119",
            "hidden_act",
            f"{P('hidden_act')} = {spec.hidden_act!r}: every DFlash engine builds a SiLU MLP",
            value=spec.hidden_act,
        )

    # taps
    ids = list(spec.target_layer_ids)
    path_ids = P("target_layer_ids")
    shown = list(spec.aux_hidden_state_layer_ids) if spec.dialect == "flat" else ids
    if len(set(ids)) != len(ids) or ids != sorted(ids):
        add(
            "DF107",
            "target_layer_ids",
            f"{path_ids} = {shown} must be unique and increasing (fc concatenates the taps in this order)",
            value=shown,
        )
    if min(ids) < 0:
        add(
            "DF107",
            "target_layer_ids",
            f"{path_ids} = {shown}: aux_hidden_state_layer_ids start at 1 (they are target_layer_ids + 1)",
            value=shown,
        )
    if spec.num_target_layers is not None:
        beyond = [i for i in ids if i >= spec.num_target_layers]
        if beyond:
            add(
                "DF107",
                "target_layer_ids",
                f"{path_ids} = {shown} names layer(s) {beyond} but the target has num_target_layers = "
                f"{spec.num_target_layers} (ids are 0-based decoder layers; an off-by-one loads fine and "
                "collapses acceptance)",
                value=shown,
                num_target_layers=spec.num_target_layers,
            )

    # layer types and windows
    n_types = len(spec.layer_types)
    if n_types != spec.num_hidden_layers:
        add(
            "DF108",
            "layer_types",
            f"{P('layer_types')} has {n_types} entries for num_hidden_layers = {spec.num_hidden_layers}",
            length=n_types,
            layers=spec.num_hidden_layers,
        )
    sliding = [i for i, t in enumerate(spec.layer_types) if t == "sliding_attention"]
    if sliding and not spec.sliding_window:
        add(
            "DF109",
            "sliding_window",
            f"layers {sliding} are sliding_attention but {P('sliding_window')} is "
            f"{spec.sliding_window!r}; set the window the drafter was trained with",
            layers=sliding,
        )

    # vocabulary
    if spec.mask_token_id is None:
        add(
            "DF113",
            "mask_token_id",
            f"no {P('mask_token_id')}: engines cannot build the [anchor, mask, ...] "
            "query block; set it to the mask token the drafter was trained with",
        )
    elif spec.mask_token_id >= spec.vocab_size:
        add(
            "DF106",
            "mask_token_id",
            f"{P('mask_token_id')} = {spec.mask_token_id} is outside the vocabulary [0, {spec.vocab_size})",
            value=spec.mask_token_id,
            vocab_size=spec.vocab_size,
        )
    if spec.block_size is None:
        add(
            "DF114",
            "block_size",
            f"no {P('block_size')}: engines serve with 1 + num_speculative_tokens, "
            "whatever the drafter was trained on",
        )

    conflict = _block_size_conflict(config)
    if conflict:
        out.append(conflict)
    if (
        spec.dialect == "nested"
        and ("block_size" in config or "rope_theta" in config)
        and spec.version == "v1"
    ):
        out.append(
            Finding(
                "DF115",
                "old nested dialect: block_size / rope_theta at the top level "
                "(read by the engines; `convert` writes the current form)",
                field="block_size",
            )
        )

    if spec.version == "v2":
        _v2_rules(spec, add)
    return out


def _v2_rules(spec: DraftSpec, add: Any) -> None:
    P = spec.path
    gs, T, K = spec.conv_group_size, spec.conv_kernel_size, spec.selector_top_k
    assert gs is not None and T is not None and K is not None
    if spec.hidden_size % gs:
        add(
            "DF103",
            "conv_group_size",
            f"{P('conv_group_size')} = {gs} does not divide hidden_size = "
            f"{spec.hidden_size}; the conv cannot split channels into groups",
            value=gs,
            hidden_size=spec.hidden_size,
        )
    if spec.block_size is not None and spec.block_size < T:
        add(
            "DF104",
            "conv_kernel_size",
            f"{P('conv_kernel_size')} = {T} taps exceed block_size = "
            f"{spec.block_size}; taps never cross a block",
            value=T,
            block_size=spec.block_size,
        )
    if spec.vocab_size < K:
        add(
            "DF105",
            "selector_top_k",
            f"{P('selector_top_k')} = {K} exceeds vocab_size = {spec.vocab_size}",
            value=K,
            vocab_size=spec.vocab_size,
        )
    if spec.drafter_extra.get("sample_from_anchor") is True:
        add(
            "DF110",
            "sample_from_anchor",
            f"{P('sample_from_anchor')} is true; DFlash2 drafts from the mask slots only. Set it to false",
        )
    dv = spec.drafter_extra.get("draft_vocab_size")
    if spec.dialect == "flat" and dv is not None and dv != spec.vocab_size:
        add(
            "DF111",
            "draft_vocab_size",
            f"draft_vocab_size = {dv} differs from transformer_layer_config."
            f"vocab_size = {spec.vocab_size}; DFlash2 scores the full target vocabulary (codebooks have one "
            "row per token)",
            value=dv,
            vocab_size=spec.vocab_size,
        )
