"""The tensors a DraftSpec implies (docs/contract.md#tensors), the one table of tensor roles, and byte
accounting.

Extending the role table (reduced-vocabulary heads, quantized logical shapes): add a RoleRule row
above the row that would otherwise match; verify, convert and the smoke follow it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

from ..formats.assistant import ASSISTANT_TENSORS
from ..formats.spec import DraftSpec
from ..quant.storage import AUX_SUFFIXES
from ..sources.safetensors_header import TensorInfo
from .expected import COMPONENTS as COMPONENTS
from .expected import Component as Component
from .expected import Expected as Expected
from .family_layout import family_tensors


def expected_tensors(spec: DraftSpec) -> list[Expected]:
    """The tensors the spec implies; a DFlash family's own layout (formats/families.py) where it has one."""
    if spec.family is not None:
        return family_tensors(spec, _dflash_tensors(spec))
    return _dflash_tensors(spec)


def _dflash_tensors(spec: DraftSpec) -> list[Expected]:
    H, I, hd = spec.hidden_size, spec.intermediate_size, spec.head_dim
    q, kv = spec.num_attention_heads * hd, spec.num_key_value_heads * hd
    out = [
        Expected("fc.weight", (H, spec.fc_in_features), "trunk"),
        Expected("hidden_norm.weight", (H,), "trunk"),
        Expected("norm.weight", (H,), "trunk"),
    ]
    for i in range(spec.num_hidden_layers):
        p = f"layers.{i}."
        out += [
            Expected(p + "input_layernorm.weight", (H,), "trunk"),
            Expected(p + "post_attention_layernorm.weight", (H,), "trunk"),
        ]
        for proj, shape in (("q_proj", (q, H)), ("k_proj", (kv, H)), ("v_proj", (kv, H)), ("o_proj", (H, q))):
            out.append(Expected(f"{p}self_attn.{proj}.weight", shape, "trunk"))
            if spec.attention_bias:
                out.append(Expected(f"{p}self_attn.{proj}.bias", (shape[0],), "trunk"))
        out += [
            Expected(p + "self_attn.q_norm.weight", (hd,), "trunk"),
            Expected(p + "self_attn.k_norm.weight", (hd,), "trunk"),
            Expected(p + "mlp.gate_proj.weight", (I, H), "trunk"),
            Expected(p + "mlp.up_proj.weight", (I, H), "trunk"),
            Expected(p + "mlp.down_proj.weight", (H, I), "trunk"),
        ]
        if spec.version == "v2":
            T = spec.conv_kernel_size or 0
            G = H // spec.conv_group_size if spec.conv_group_size else 0
            for mod in ("attention_conv", "mlp_conv"):
                out += [
                    Expected(f"{p}{mod}.base_kernel", (2, T, H), "conv"),
                    Expected(f"{p}{mod}.kernel_projection.weight", (2 * T * G, H), "conv"),
                ]
    if spec.version == "v2":
        V, R = spec.vocab_size, spec.selector_rank or 0
        out += [
            Expected("candidate_selector.predecessor_codebook", (V, R), "selector"),
            Expected("candidate_selector.successor_codebook", (V, R), "selector"),
            Expected("candidate_selector.hidden_projection.weight", (R, H), "selector"),
        ]
    return out


# ---------------------------------------------------------------------------------------------------
# Tensor roles: what a stored tensor name IS, decided once. verify (checks/tensors), convert (plan) and
# the smoke loader (smoke/weights) all ask role_of(); none keeps its own list of names.

Role = Literal[
    "trunk", "conv", "selector", "target-copy", "vocab-map", "alias", "quant-aux", "own-head", "unknown"
]
# what convert does with a tensor of the role: keep it, write it under its canonical name, or drop it
Fate = Literal["keep", "rename", "drop"]

_QUANT_SUFFIXES = "|".join(sorted(AUX_SUFFIXES))
_DRAFTER_PART = (
    r"(?:fc\.|hidden_norm\.|norm\.|candidate_selector\.|"
    r"layers\.\d+\.(?:input_layernorm|post_attention_layernorm|self_attn|mlp|attention_conv|mlp_conv)\.)"
)


@dataclass(frozen=True)
class RoleRule:
    """One row of the role table. The first row whose pattern matches a name decides its role."""

    role: Role
    pattern: re.Pattern[str]
    fate: Fate
    reason: str = ""  # why convert drops / renames it (shown in the plan)
    code: str | None = None  # the verify finding a tensor of this row raises (None: a drafter part)
    canonical: str | None = None  # alias: re.sub template giving the name the engines load
    copies: str | None = None  # target-copy: the target table it duplicates (embed_tokens, lm_head, norm)


def _rule(role: Role, pattern: str, fate: Fate, **kw: str | None) -> RoleRule:
    return RoleRule(role, re.compile(pattern), fate, **kw)  # type: ignore[arg-type]


_COPY = "copy of the target's table; the engines use the target's own"
ROLE_TABLE: tuple[RoleRule, ...] = (
    # copies of the target (docs/contract.md#the-flat-dialect: speculators 0.9.0 drops embed_tokens /
    # verifier_* on save)
    _rule(
        "target-copy",
        r"^(?:model\.)?embed_tokens\.weight$",
        "drop",
        reason=_COPY,
        code="DF207",
        copies="embed_tokens",
    ),
    _rule(
        "target-copy",
        r"^(?:model\.)?(?:verifier_)?lm_head\.weight$",
        "drop",
        reason=_COPY,
        code="DF207",
        copies="lm_head",
    ),
    _rule("target-copy", r"^verifier_norm\.weight$", "drop", reason=_COPY, code="DF207", copies="norm"),
    _rule(
        "vocab-map",
        r"^(?:t2d|d2t)(?:\.weight)?$",
        "drop",
        code="DF210",
        reason="vocabulary map; a full-vocabulary drafter has no use for it",
    ),
    # quantization side tensors (compressed-tensors, ModelOpt, MLX, GPTQ / AWQ): checks/quant.py judges them
    # per module from the quantization config (quant/storage.py lists the suffixes)
    _rule(
        "alias",
        r"^model\.(" + _DRAFTER_PART + r".*\.(?:" + _QUANT_SUFFIXES + r"))$",
        "rename",
        canonical=r"\1",
        code="DF202",
        reason="the engines load names without the model. prefix",
    ),
    _rule("quant-aux", r"\.(?:" + _QUANT_SUFFIXES + r")$", "keep"),
    # names the engines do not load, each the variant of a drafter part
    # (docs/contract.md#names-seen-in-the-wild)
    # the assistant export's context projection (formats/assistant.py)
    *(
        _rule(
            "alias",
            "^" + re.escape(stored) + "$",
            "rename",
            canonical=bare,
            code="DF208",
            reason="the name the engines load",
        )
        for stored, bare in ASSISTANT_TENSORS.items()
    ),
    _rule(
        "alias",
        r"^(candidate_selector\.(?:predecessor|successor)_codebook)\.weight$",
        "rename",
        canonical=r"\1",
        code="DF206",
        reason="the name the engines load",
    ),
    _rule(
        "alias",
        r"^model\.(" + _DRAFTER_PART + r".*)$",
        "rename",
        canonical=r"\1",
        code="DF202",
        reason="the engines load names without the model. prefix",
    ),
    _rule("conv", r"^layers\.\d+\.(?:attention_conv|mlp_conv)\.", "keep"),
    _rule("selector", r"^candidate_selector\.", "keep"),
    _rule(
        "trunk",
        r"^(?:fc\.|hidden_norm\.|norm\.|layers\.\d+\.(?:input_layernorm|post_attention_layernorm|"
        r"self_attn|mlp)\.)",
        "keep",
    ),
)
UNKNOWN = _rule("unknown", r"", "keep", code="DF202")


@dataclass(frozen=True)
class TensorRole:
    name: str
    role: Role
    canonical: str  # the name the engines load (differs from `name` for an alias)
    rule: RoleRule

    @property
    def component(self) -> Component:
        """Byte-accounting bucket: the drafter part an alias or quantization tensor belongs to."""
        if self.role in ("trunk", "conv", "selector"):
            return self.role
        if self.role in ("alias", "quant-aux"):
            # an alias counts as the part it names; a quantization tensor as the module it belongs to
            inner = (
                self.canonical if self.role == "alias" else re.sub(r"\.[A-Za-z_0-9]+$", ".weight", self.name)
            )
            return role_of(inner).component
        return "extras"


def role_of(name: str) -> TensorRole:
    for rule in ROLE_TABLE:
        m = rule.pattern.search(name)
        if m:
            canon = m.expand(rule.canonical) if rule.canonical else name
            return TensorRole(name, rule.role, canon, rule)
    return TensorRole(name, "unknown", name, UNKNOWN)


# A drafter with a reduced draft vocabulary (flat v1, draft_vocab_size < vocab_size) owns its lm_head
# [draft_vocab, H] and its t2d / d2t maps: the same names as a target copy and a dropped map, another role.
# Decided with the spec (role_for); checks/vocab.py checks them.
OWN_VOCAB_RULES = (
    _rule("own-head", r"^lm_head\.weight$", "keep", code="DF212"),
    _rule("vocab-map", r"^(?:t2d|d2t)(?:\.weight)?$", "keep"),
)


def draft_vocab(spec: DraftSpec | None) -> int | None:
    """draft_vocab_size when it differs from the target vocabulary (flat v1), else None."""
    if spec is None or spec.dialect != "flat" or spec.version != "v1":
        return None
    dv = spec.drafter_extra.get("draft_vocab_size")
    return dv if isinstance(dv, int) and not isinstance(dv, bool) and dv != spec.vocab_size else None


def gguf_draft_vocab(spec: DraftSpec | None) -> int | None:
    """The draft vocabulary of a GGUF drafter with d2t (its lm_head and d2t are its own; d2t holds absolute
    target ids there, so draft_vocab(), whose maps are offsets, does not answer for it)."""
    dv = spec.drafter_extra.get("draft_vocab_size") if spec is not None and spec.dialect == "gguf" else None
    return dv if isinstance(dv, int) and not isinstance(dv, bool) else None


def role_for(name: str, spec: DraftSpec | None) -> TensorRole:
    """role_of, knowing the drafter: a reduced-vocabulary drafter's own head and maps are its own."""
    if draft_vocab(spec) is not None or gguf_draft_vocab(spec) is not None:
        for rule in OWN_VOCAB_RULES:
            if rule.pattern.search(name):
                return TensorRole(name, rule.role, name, rule)
    return role_of(name)


def canonical_names(names: Iterable[str], spec: DraftSpec | None) -> frozenset[str]:
    """The tensors a drafter is made of under the names its loaders map them to: name variants resolved,
    copies of the target and dropped buffers left out (what the meaning check compares)."""
    out = set()
    for n in names:
        r = role_for(n, spec)
        if r.rule.fate != "drop":
            out.add(r.canonical)
    return frozenset(out)


def component_of(name: str) -> Component:
    """Which part of the drafter a stored tensor belongs to, by name (variants included)."""
    return role_of(name).component


def bytes_by_component(tensors: Iterable[TensorInfo]) -> dict[Component, int]:
    out: dict[Component, int] = {c: 0 for c in COMPONENTS}
    for t in tensors:
        out[component_of(t.name)] += t.nbytes
    return out


def v2_bytes(tensors: Iterable[TensorInfo]) -> int:
    """Bytes a v1 loader would silently drop: every conv and selector tensor."""
    b = bytes_by_component(tensors)
    return b["conv"] + b["selector"]
