"""What a checkpoint's shipped layout means to one engine release: its architecture name against the
release's registry (DF160), the draft-position layout (anchor-first vs fill-in, DF161) and the speculative
token count a flat config states (DF162).

One function, `layout_findings(profile, drafter)`, serves both verify (checks/engine_layouts.py, for the
engines it judges) and compat (judge.py, for every profile), so the two cannot disagree. Each finding names
its engine in `details["engines"]`: a verify error stops those engines only (judge.hits).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ..findings import Finding
from . import layout_cites as c
from .profile import Cite, Drafter, Profile

EMITS: frozenset[str] = frozenset({"DF160", "DF161", "DF162", "DF631"})


# --- architecture names -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Registry:
    """The DFlash draft architectures an engine's releases register (union over every release read), how
    it looks a name up, and the names it wants per DFlash version."""

    names: frozenset[str]
    lookup: Callable[[str], str]
    cites: tuple[Cite, ...]


def _vllm_lookup(arch: str) -> str:
    """vLLM's EAGLE config looks a draft architecture up as DFlash{arch} unless it starts or ends with
    DFlash."""
    return arch if arch.startswith("DFlash") or arch.endswith("DFlash") else f"DFlash{arch}"


REGISTRIES: dict[str, Registry] = {
    # vllm 0.27.1..0.34.0 registry.py (names with DFlash / XPress, after the rewrite)
    "vllm": Registry(
        frozenset(
            {
                "DFlashDraftModel",
                "DFlash2DraftModel",
                "DFlashMuseGlimmerAssistantModel",
                "DFlashLagunaForCausalLM",
                "DFlash2BeamDraftModel",
                "DFlash2RicursiveDraftModel",
                "DFlashQwen3XPressModel",
            }
        ),
        _vllm_lookup,
        (c.VLLM_REG_DFLASH, c.VLLM_REG_DFLASH2, c.VLLM_REG_NO_QWEN3_NAME, c.VLLM_ARCH_REWRITE),
    ),
    # sglang 0.5.18..0.5.23 models/dflash.py EntryClass
    "sglang": Registry(
        frozenset(
            {
                "DFlashDraftModel",
                "DFlashLagunaForCausalLM",
                "MuseGlimmerAssistantModel",
                "DFlash2DraftModel",
                "DFlash2BeamDraftModel",
                "MiniMaxDFlash2DraftModel",
            }
        ),
        lambda a: a,
        (c.SGLANG_REG_DFLASH, c.SGLANG_REG_DFLASH2, c.SGLANG_REG_NO_QWEN3_NAME),
    ),
}
WANTED = {"v1": "DFlashDraftModel", "v2": "DFlash2DraftModel"}


def _architecture(p: Profile, d: Drafter) -> list[Finding]:
    reg = REGISTRIES.get(p.engine)
    archs = d.config.get("architectures")
    # the flat dialect names no architecture vLLM looks up (its speculators reader writes DFlashDraftModel)
    if reg is None or d.dialect != "nested" or d.version is None or not isinstance(archs, list) or not archs:
        return []
    arch = archs[0]
    if not isinstance(arch, str):
        return []
    looked_up = reg.lookup(arch)
    if looked_up in reg.names:
        return []
    want = WANTED[d.version]
    how = f" (it looks the name up as {looked_up})" if looked_up != arch else ""
    cite = reg.cites[0 if d.version == "v1" else 1]
    msg = (
        f"{p.title} registers no draft architecture {arch!r}{how}: it refuses the checkpoint as an "
        f'unsupported architecture. Set architectures to ["{want}"], the name it registers for a DFlash '
        f"{d.version} drafter ({cite})"
    )
    return [
        Finding(
            "DF160",
            msg,
            field="architectures",
            details={
                "engines": [p.id],
                "architecture": arch,
                "looked_up": looked_up,
                "wants": want,
                "source": "; ".join(map(str, reg.cites)),
            },
        )
    ]


# --- the draft-position layout ------------------------------------------------------------------------


def anchor_first(config: Mapping[str, Any]) -> tuple[str, Any] | None:
    """The key that says the drafter was trained anchor-first (its first draft token read from the anchor's
    slot), or None for the fill-in layout (drafts read from the mask slots 1..block_size-1)."""
    dc = config.get("dflash_config")
    dc = dc if isinstance(dc, dict) else {}
    for where, node in (("dflash_config", dc), ("", config)):
        prefix = f"{where}." if where else ""
        if node.get("sample_from_anchor") is True:
            return f"{prefix}sample_from_anchor", True
        if node.get("logits_start") == 0 and not isinstance(node.get("logits_start"), bool):
            return f"{prefix}logits_start", 0  # the MLX ports' name for the same choice
    return None


@dataclass(frozen=True)
class AnchorRule:
    """How an engine reads the layout: `reads` the key it honours (None: it reads none for DFlash),
    `refuses`: an anchor-first value in that key is refused at load (loud), else the engine drafts fill-in."""

    reads: str | None
    refuses: bool
    text: str
    cites: tuple[Cite, ...]


ANCHOR_RULES: dict[str, AnchorRule] = {
    "vllm": AnchorRule(
        "dflash_config.sample_from_anchor",
        True,
        'its runner raises "sample_from_anchor=True is not supported for DFlash"; a layout '
        "key elsewhere is not read and every draft comes from the mask slots",
        (c.VLLM_ANCHOR_REFUSED, c.VLLM_ANCHOR_KEY),
    ),
    "sglang": AnchorRule(
        None,
        False,
        "it drafts from slots 1..block_size-1 of every block (slot 0 is the "
        "anchor) and reads no layout key for a DFlash drafter",
        (c.SGLANG_FILL_IN, c.SGLANG_NO_ANCHOR_KEY),
    ),
    "mlx-vlm": AnchorRule(
        None,
        False,
        "its DFlash drafter scores draft_hidden[:, 1:] (the mask slots) and its config has no layout key",
        (c.MLXVLM_FILL_IN, c.MLXVLM_NO_ANCHOR_KEY),
    ),
    "llama.cpp": AnchorRule(
        None,
        False,
        "it reads dflash.sample_from_anchor for DSpark drafts only; a DFlash draft reads the mask slots",
        (c.LC_FILL_IN,),
    ),
}


def anchor_reading(p: Profile) -> AnchorRule | None:
    return ANCHOR_RULES.get(p.engine)


def _layout(p: Profile, d: Drafter) -> list[Finding]:
    rule = ANCHOR_RULES.get(p.engine)
    first = anchor_first(d.config)
    if rule is None or first is None or d.version is None:
        return []
    key, value = first
    if d.version == "v2" and key.endswith("sample_from_anchor"):
        return []  # DF110 already refuses sample_from_anchor on every DFlash2 drafter
    src = "; ".join(map(str, rule.cites))
    details = {"engines": [p.id], "key": key, "value": value, "source": src}
    if rule.refuses and key == rule.reads:
        return [
            Finding(
                "DF161",
                f"{p.title} refuses an anchor-first drafter ({key} = {str(value).lower()}): "
                f"{rule.text} ({src}). Serve it with an engine that drafts anchor-first, or retrain "
                "fill-in",
                field=key,
                details=details,
            )
        ]
    return [
        Finding(
            "DF161",
            f"{p.title} drafts fill-in, but {key} = {str(value).lower()} says this drafter "
            f"was trained anchor-first: every draft position is shifted by one, nothing raises and "
            f"acceptance collapses toward 1 (sgl-project/sglang#40144: τ 1.06). {rule.text} ({src})",
            field=key,
            details=details,
        )
    ]


# --- serving parameters --------------------------------------------------------------------------------


def speculative_tokens(config: Mapping[str, Any]) -> tuple[str, Any] | None:
    """The draft-token count a flat config states (speculators_config.proposal_methods[0].speculative_tokens,
    or a top-level num_speculative_tokens)."""
    sc = config.get("speculators_config")
    methods = sc.get("proposal_methods") if isinstance(sc, dict) else None
    first = methods[0] if isinstance(methods, list) and methods else None
    if isinstance(first, dict) and "speculative_tokens" in first:
        return "speculators_config.proposal_methods[0].speculative_tokens", first["speculative_tokens"]
    if "num_speculative_tokens" in config:
        return "num_speculative_tokens", config["num_speculative_tokens"]
    return None


def _tokens(p: Profile, d: Drafter) -> list[Finding]:
    stated = speculative_tokens(d.config)
    block = d.spec.block_size if d.spec is not None else None
    if p.engine != "vllm" or d.dialect != "flat" or stated is None or block is None:
        return []
    key, n = stated
    if not isinstance(n, int) or isinstance(n, bool) or n <= block - 1:
        return []
    src = str(c.VLLM_SPEC_TOKENS)
    msg = (
        f"{p.title} takes num_speculative_tokens from {key} = {n}, but a DFlash block of {block} drafts "
        f"block_size - 1 = {block - 1} tokens (the anchor fills slot 0): set it to {block - 1} "
        f"(vllm-project/speculators#456; {src})"
    )
    return [
        Finding(
            "DF162",
            msg,
            field=key,
            details={"engines": [p.id], "key": key, "value": n, "block_size": block, "source": src},
        )
    ]


# --- the mask-embedding sidecar ----------------------------------------------------------------------------

MASK_SIDECAR = "mask_embedding.pt"


def _mask_row(p: Profile, d: Drafter) -> list[Finding]:
    """SGLang reads neither mask_embedding.pt nor a mask_embedding tensor: it embeds the mask slots with the
    target's row for mask_token_id, near zero where the drafter was trained with its own (MiMo)."""
    shipped = [f for f in d.files if f.rsplit("/", 1)[-1] == MASK_SIDECAR]
    if p.engine != "sglang" or d.version is None or not (shipped or "mask_embedding" in d.tensors):
        return []
    what = shipped[0] if shipped else "the mask_embedding tensor"
    src = str(c.SGLANG_NO_MASK_EMBEDDING)
    msg = (
        f"{p.title} reads no mask embedding ({src}): it ignores {what} and embeds the mask slots with the "
        "target's row for mask_token_id, which is near zero; nothing raises and acceptance falls to ~1.4 "
        "(sgl-project/sglang#27924). vLLM reads mask_embedding.pt"
    )
    return [
        Finding(
            "DF631",
            msg,
            file=shipped[0] if shipped else None,
            tensor=None if shipped else "mask_embedding",
            details={"engines": [p.id], "source": src},
        )
    ]


def layout_findings(p: Profile, d: Drafter) -> list[Finding]:
    """Every layout finding of this engine release on this drafter (errors: the engine refuses it or drafts
    every position shifted; warnings: it loads and drafts worse)."""
    return _architecture(p, d) + _layout(p, d) + _tokens(p, d) + _mask_row(p, d)
