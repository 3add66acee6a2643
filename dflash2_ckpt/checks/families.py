"""DF14x / DF240: what a DFlash family's own keys and tensors say (formats/families.py), engine-independent.

- DF140 / DF141: vLLM 0.34.0 reads a Ricursive drafter's no_rope_layers as layer INDICES
  (ricursive_dflash2.py `if layer_idx in config.no_rope_layers`); SmolLM3 / Muse targets write a per-layer
  0/1 mask with 1 = rotate, the opposite reading, and a mask copied into a drafter config changes meaning
  silently. An index outside the draft layers fails the context-KV precompute.
- DF142: XPress and Laguna share the target's lm_head; their model classes raise where draft_vocab_size
  differs from the target's vocabulary (judged here when --target is given).
- DF240: a MoE DFlash2 drafter's expert tensors; no released engine loads one.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..engines import released_families as c
from ..findings import Finding
from ..formats import families as fam

if TYPE_CHECKING:
    from .context import CheckContext

EMITS: frozenset[str] = frozenset({"DF140", "DF141", "DF142", "DF240"})


def check(ctx: CheckContext) -> list[Finding]:
    spec, ckpt = ctx.spec, ctx.checkpoint
    if spec is None or spec.family is None:
        return []
    config = ckpt.config or {}
    out: list[Finding] = []
    if spec.family == fam.RICURSIVE:
        out += _no_rope(
            config,
            spec.num_hidden_layers,
            "transformer_layer_config.no_rope_layers" if spec.dialect == "flat" else "no_rope_layers",
        )
    if spec.family == fam.MOE:
        experts = fam.expert_tensors(ckpt.tensors)
        out.append(
            Finding(
                "DF240",
                f"{len(experts)} expert MLP tensors ({experts[0]}, ...) make this a MoE DFlash2 "
                "drafter: no released engine loads one (vLLM's DFlash2 model builds dense MLPs only; "
                "MoE support is an open pull request)",
                tensor=experts[0],
                details={"tensors": len(experts), "source": str(c.FAM_MOE_ABSENT)},
            )
        )
    tcfg = ctx.target.config if ctx.target is not None and ctx.target.config is not None else {}
    text = tcfg.get("text_config")
    target_vocab = tcfg.get("vocab_size", text.get("vocab_size") if isinstance(text, dict) else None)
    dv = config.get("draft_vocab_size")
    if (
        spec.family in (fam.XPRESS, fam.LAGUNA)
        and target_vocab is not None
        and dv is not None
        and dv != target_vocab
    ):
        cite = c.FAM_XPRESS_FULL_VOCAB if spec.family == fam.XPRESS else c.FAM_LAGUNA_VOCAB_MATCH
        out.append(
            Finding(
                "DF142",
                f"draft_vocab_size {dv} differs from the target's vocab_size {target_vocab}: "
                f"vLLM's {spec.family} drafter shares the target lm_head and raises at load; set "
                f"draft_vocab_size to {target_vocab}",
                field="draft_vocab_size",
                details={"target_vocab_size": target_vocab, "source": str(cite)},
            )
        )
    return out


def _no_rope(config: dict[str, object], n: int, path: str) -> list[Finding]:
    value = fam.no_rope_layers(config)
    source = f"{c.FAM_RICURSIVE_INDEX}; {c.FAM_RICURSIVE_CONTEXT}"
    if fam.looks_like_mask(value, n):
        assert isinstance(value, list)
        indices = [i for i, v in enumerate(value) if v == 0]
        read = sorted({v for v in value})
        return [
            Finding(
                "DF140",
                f"{path} = {value} looks like a per-layer 0/1 mask (SmolLM3 / Muse targets: "
                f"1 = rotate), but vLLM 0.34 reads it as layer INDICES: it drops RoPE on layers {read} "
                f"only. If layers {indices} were trained without RoPE, write {path} = {indices}",
                field=path,
                details={"engine_nope_layers": read, "mask_nope_layers": indices, "source": source},
            )
        ]
    items = value if isinstance(value, list) else [value]
    bad = [v for v in items if not (type(v) is int and 0 <= v < n)]
    if bad:
        return [
            Finding(
                "DF141",
                f"{path} holds {bad[:5]}, not draft layer indices in [0, {n}): vLLM 0.34's "
                "context-KV precompute indexes each listed layer (IndexError) while no decoder layer "
                f"matches it; list the layers trained without RoPE",
                field=path,
                details={"invalid": bad[:20], "layers": n, "source": source},
            )
        ]
    return []
