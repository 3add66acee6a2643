"""vLLM's rules for the DFlash families (formats/families.py), per release, in vLLM's own words.

engines/vllm.py adds `for_range(versions)` to each of its profiles: registration (DF830 where a release
has no model class for the family), the invariants the family's model class asserts or raises on, and the
keys a release ignores (DF831: the drafter runs, but not as trained). Every fact cites
released_families.py.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..formats import families as fam
from . import released_families as c
from .profile import Cite, Drafter, Fact, KeyRead, Refusal, fact
from .versions import VersionRange, compare, parse_version


def _family(d: Drafter) -> str | None:
    return d.spec.family if d.spec is not None else None


def _dc(d: Drafter) -> dict[str, Any]:
    dc = d.config.get("dflash_config")
    return dc if isinstance(dc, dict) else {}


def _src(*cites: Cite) -> str:
    return "; ".join(str(x) for x in cites)


def _layer_types(d: Drafter) -> Any:
    return d.config.get("layer_types")


# --- registration ---------------------------------------------------------------------------------


def _unregistered(name: str, arch: str, since: str) -> Callable[[Drafter], str | None]:
    def check(d: Drafter) -> str | None:
        if _family(d) != name:
            return None
        return (
            f"{arch} is not a registered architecture before vLLM {since}: the registry has no model class "
            "for it and loading raises ('Model architectures [...] are not supported'); serve it on "
            f"{since} or later"
        )

    return check


def _ricursive_named(d: Drafter) -> str | None:
    if _family(d) == fam.RICURSIVE and fam.RICURSIVE_ARCH in (d.config.get("architectures") or []):
        return (
            f"{fam.RICURSIVE_ARCH} is not a registered architecture before vLLM 0.34.0; write "
            "DFlash2DraftModel "
            "with no_rope_layers, which 0.34.0 routes to it and older releases load as plain DFlash2"
        )
    return None


def _moe(d: Drafter) -> str | None:
    if _family(d) != fam.MOE:
        return None
    return (
        "its expert MLP tensors (a MoE DFlash2 drafter) match no parameter of any released vLLM DFlash model "
        "(qwen3_dflash2.py builds dense MLPs only); no released engine loads a MoE DFlash2 drafter yet"
    )


# --- Ricursive ------------------------------------------------------------------------------------


def _nope_ignored(d: Drafter) -> str | None:
    if _family(d) != fam.RICURSIVE or d.spec is None:
        return None
    layers = fam.nope_layers(d.config, d.spec.num_hidden_layers)
    shown = ", ".join(map(str, layers)) or "none in range"
    return (
        f"does not read no_rope_layers (layers {shown} were trained without RoPE): releases before 0.34.0 "
        "load "
        "the drafter as plain DFlash2 and rotate every layer"
    )


def _nope_out_of_range(d: Drafter) -> str | None:
    if _family(d) != fam.RICURSIVE or d.spec is None:
        return None
    value = fam.no_rope_layers(d.config)
    n = d.spec.num_hidden_layers
    bad = [v for v in (value if isinstance(value, list) else [value]) if not (type(v) is int and 0 <= v < n)]
    if not bad:
        return None
    return (
        f"no_rope_layers holds {bad[:5]}, not layer indices in [0, {n}): the context-KV precompute indexes "
        "every listed layer (`all_k[i]`: IndexError) while the decoder layers match none of them"
    )


# --- Beam -----------------------------------------------------------------------------------------


def _qwen3_layer_types(d: Drafter, n: int) -> list[str] | None:
    """What transformers' Qwen3Config fills in when layer_types is absent (FAM_QWEN3_LAYER_TYPES)."""
    if d.config.get("model_type") != "qwen3":
        return None
    window, first = d.config.get("sliding_window"), d.config.get("max_window_layers", 28)
    first = first if isinstance(first, int) else 28
    return ["sliding_attention" if window is not None and i >= first else "full_attention" for i in range(n)]


def _beam_sliding(d: Drafter) -> str | None:
    if _family(d) != fam.BEAM:
        return None
    n = d.spec.num_hidden_layers if d.spec is not None else 0
    given = _layer_types(d)
    lt = given if isinstance(given, list) else _qwen3_layer_types(d, n)
    if isinstance(lt, list) and len(lt) >= n and all(t == "sliding_attention" for t in lt[:n]):
        return None
    bad = [i for i, t in enumerate(lt) if t != "sliding_attention"] if isinstance(lt, list) else "all"
    how = (
        "layer_types says otherwise"
        if isinstance(given, list)
        else (
            "layer_types is absent and Qwen3Config fills it from sliding_window / max_window_layers"
            if lt is not None
            else "layer_types is absent"
        )
    )
    return (
        f"every Beam draft layer must be sliding attention (layers {bad} are not; {how}): "
        'DFlash2BeamAttention asserts `config.layer_types[layer_idx] == "sliding_attention"` (AssertionError)'
    )


def _beam_not_causal(d: Drafter) -> str | None:
    if _family(d) != fam.BEAM:
        return None
    if "is_causal" not in d.config:
        return (
            "is_causal is absent, and DFlash2BeamAttention reads it as `assert not config.is_causal` "
            "(AttributeError); set is_causal: false"
        )
    if d.config.get("is_causal"):
        return "is_causal is true, and DFlash2BeamAttention asserts `not config.is_causal` (AssertionError)"
    return None


def _beam_softcap(rocm_defaults: bool) -> Callable[[Drafter], str | None]:
    def check(d: Drafter) -> str | None:
        if _family(d) != fam.BEAM:
            return None
        value = _dc(d).get("final_logit_softcapping")
        rocm = " (0.34.0's ROCm path defaults it to off)" if rocm_defaults else ""
        if "final_logit_softcapping" not in _dc(d):
            return (
                "dflash_config.final_logit_softcapping is absent, and the Beam model reads "
                f'`float(draft_config["final_logit_softcapping"])` (KeyError){rocm}'
            )
        if not isinstance(value, (int, float)) or isinstance(value, bool):
            return (
                f"dflash_config.final_logit_softcapping is {value!r}, and the Beam model reads "
                f'`float(draft_config["final_logit_softcapping"])` (TypeError){rocm}'
            )
        return None

    return check


_BEAM_KEYS = ("conv_kernel_size", "conv_group_size", "selector_rank", "selector_top_k", "target_layer_ids")


def _beam_keys(d: Drafter) -> str | None:
    if _family(d) != fam.BEAM:
        return None
    missing = [k for k in _BEAM_KEYS if k not in _dc(d)]
    if not missing:
        return None
    return (
        f"dflash_config lacks {', '.join(missing)}, which the Beam model reads as "
        f'`draft_config["{missing[0]}"]` (KeyError)'
    )


def _beam_fc(d: Drafter) -> str | None:
    spec = d.spec
    if _family(d) != fam.BEAM or spec is None or spec.target_hidden_size in (None, spec.hidden_size):
        return None
    return (
        f"target_hidden_size {spec.target_hidden_size} differs from hidden_size {spec.hidden_size}: the Beam "
        "model builds fc with `config.hidden_size * len(target_layer_ids)` inputs, so fc.weight does not fit"
    )


def _beam_scales(rocm_reads: bool) -> Callable[[Drafter], str | None]:
    def check(d: Drafter) -> str | None:
        if _family(d) != fam.BEAM:
            return None
        dc = _dc(d)
        set_ = [
            k
            for k, off in (
                ("input_embedding_scale", 1.0),
                ("output_multiplier", 1.0),
                ("attention_value_scale", None),
            )
            if dc.get(k, off) not in (off, None)
        ]
        if not set_:
            return None
        where = (
            "on every platform but ROCm (0.34.0's ROCm path reads them)"
            if rocm_reads
            else "on every platform (0.33.0's Beam model has only its NVIDIA path)"
        )
        return f"does not read dflash_config.{', '.join(set_)} {where}: the drafter runs unscaled"

    return check


# --- XPress ---------------------------------------------------------------------------------------


def _xpress_mix(d: Drafter) -> str | None:
    if _family(d) != fam.XPRESS or "xpress_head.mix.L" in d.tensors:
        return None
    return (
        "the checkpoint has no xpress_head.mix.L, and load_weights raises ValueError 'XPress checkpoint is "
        "missing xpress_head.mix.L' (0.34.0 keeps an identity mixer instead)"
    )


def _xpress_identity(d: Drafter) -> str | None:
    if _family(d) != fam.XPRESS or "xpress_head.mix.L" in d.tensors:
        return None
    return "no xpress_head.mix.L: the refiner keeps its identity mixer (no mixing across block positions)"


def _draft_vocab(d: Drafter) -> Any:
    return d.config.get("draft_vocab_size")


def _xpress_vocab(d: Drafter) -> str | None:
    spec = d.spec
    dv = _draft_vocab(d)
    if _family(d) != fam.XPRESS or spec is None or dv is None or dv == spec.vocab_size:
        return None
    return (
        f"draft_vocab_size {dv} differs from vocab_size {spec.vocab_size}: NotImplementedError 'XPress "
        "currently requires a full-vocab draft (the refiner bias is defined over the target vocabulary)'"
    )


# --- Laguna ---------------------------------------------------------------------------------------


def _laguna_layer_types(d: Drafter) -> str | None:
    if _family(d) != fam.LAGUNA:
        return None
    lt = _layer_types(d)
    n = d.spec.num_hidden_layers if d.spec is not None else None
    if not isinstance(lt, list):
        return "layer_types is absent: ValueError 'Laguna DFlash config requires `layer_types`.'"
    if n is not None and len(lt) != n:
        return (
            f"layer_types has {len(lt)} entries for {n} layers: ValueError 'DFlash layer_types length ... "
            "does "
            "not match num_hidden_layers'"
        )
    kinds = sorted({str(t) for t in lt})
    if len(kinds) > 1:
        return (
            f"layer_types mixes {', '.join(kinds)}: NotImplementedError 'Laguna DFlash drafter requires a "
            "uniform `layer_types`'"
        )
    return None


def _laguna_taps(d: Drafter) -> str | None:
    if _family(d) != fam.LAGUNA or _dc(d).get("target_layer_ids"):
        return None
    return (
        "dflash_config.target_layer_ids is empty or absent: ValueError 'Laguna DFlash config requires "
        "non-empty `dflash_config.target_layer_ids`.'"
    )


def _laguna_draft_vocab(d: Drafter) -> str | None:
    if _family(d) != fam.LAGUNA or _draft_vocab(d) is not None:
        return None
    return (
        "draft_vocab_size is absent: ValueError 'Laguna DFlash config requires `draft_vocab_size`.' (it must "
        "equal the target's vocabulary size: the drafter shares the target lm_head)"
    )


# the name of the rule a profile that runs the Ricursive model carries (engines/meaning.py asks for it)
READS_NO_ROPE = "no_rope_layers indices"


@dataclass(frozen=True)
class FamilyRules:
    requires: tuple[Refusal, ...]
    constraints: tuple[Refusal, ...]
    ignores: tuple[Refusal, ...]
    advisories: tuple[Refusal, ...]
    sources: tuple[Fact, ...]
    families: tuple[str, ...] = ()  # the named families the range loads (`dflash2-ckpt engines`)
    architectures: tuple[str, ...] = ()  # their registry names (the release check: engines/release_check.py)
    read_keys: tuple[KeyRead, ...] = ()


def _r(name: str, check: Callable[[Drafter], str | None], code: str, *cites: Cite) -> Refusal:
    return Refusal(name, check, _src(*cites), code)


def _V(text: str) -> tuple[int, ...]:
    return tuple(parse_version(text, "release"))


def for_range(versions: VersionRange) -> FamilyRules:
    """The family rules of the vLLM releases `versions` covers (they agree within each profile's range)."""

    def has(v: str) -> bool:
        low = versions.exact or versions.low
        return low is not None and compare(low, _V(v)) >= 0  # every range starts at a release boundary

    requires: list[Refusal] = [_r("MoE DFlash2", _moe, "DF830", c.FAM_MOE_ABSENT)]
    constraints: list[Refusal] = []
    ignores: list[Refusal] = []
    advisories: list[Refusal] = []
    facts = (
        []
        if not has("0.25.0")
        else [
            fact(
                "Laguna DFlash drafters (DFlashLagunaForCausalLM) load with uniform layer_types, non-empty "
                "dflash_config.target_layer_ids and draft_vocab_size equal to the target's; their Laguna layers "
                "are loaded by parameter name (fused qkv_proj, g_proj, aux_hidden_norms)",
                c.FAM_LAGUNA_REG,
                c.FAM_LAGUNA_LAYER_TYPES,
                c.FAM_LAGUNA_UNIFORM,
                c.FAM_LAGUNA_TAPS,
                c.FAM_LAGUNA_DRAFT_VOCAB,
                c.FAM_LAGUNA_VOCAB_MATCH,
                c.FAM_LAGUNA_AUX_NORMS,
                c.FAM_LAGUNA_BY_NAME,
                c.FAM_LAGUNA_GATING,
            )
        ]
    )
    if has("0.25.0"):
        laguna = (c.FAM_LAGUNA_LAYER_TYPES, c.FAM_LAGUNA_UNIFORM)
        constraints.append(_r("Laguna layer_types", _laguna_layer_types, "DF804", *laguna))
        requires += [
            _r("Laguna target_layer_ids", _laguna_taps, "DF803", c.FAM_LAGUNA_TAPS),
            _r("Laguna draft_vocab_size", _laguna_draft_vocab, "DF803", c.FAM_LAGUNA_DRAFT_VOCAB),
        ]
    else:
        # a range that reaches 0.25.0 holds releases with and without it: the older ones fail, so it fails
        requires.append(
            _r(
                "Laguna",
                _unregistered(fam.LAGUNA, fam.LAGUNA_ARCH, "0.25.0"),
                "DF830",
                c.FAM_LAGUNA_REG_ABSENT,
            )
        )
    if has("0.29.0"):
        facts.append(
            fact(
                "the speculators flat dialect's mapping writes DFlash2DraftModel / DFlashDraftModel whatever "
                "architecture the flat config names: only the nested dialect carries a family architecture",
                c.FAM_FLAT_ARCH,
            )
        )
    if not has("0.28.0"):
        requires.append(
            _r(
                "Muse alias",
                _unregistered(fam.MUSE, "DFlashMuseGlimmerAssistantModel", "0.28.0"),
                "DF830",
                c.FAM_MUSE_ALIAS_ABSENT,
            )
        )
    else:
        facts.append(
            fact(
                "MuseGlimmerAssistantModel and DFlashMuseGlimmerAssistantModel both route to qwen3_dflash",
                c.FAM_MUSE_ALIAS,
            )
        )
    if not has("0.33.0"):
        requires += [
            _r("Beam", _unregistered(fam.BEAM, fam.BEAM_ARCH, "0.33.0"), "DF830", c.FAM_BEAM_REG_ABSENT),
            _r(
                "XPress",
                _unregistered(fam.XPRESS, "Qwen3XPressModel", "0.33.0"),
                "DF830",
                c.FAM_XPRESS_REG_ABSENT,
            ),
        ]
    else:
        rocm = has("0.34.0")
        beam_cites = (
            c.FAM_BEAM_REG,
            c.FAM_BEAM_SLIDING,
            c.FAM_BEAM_NOT_CAUSAL,
            c.FAM_BEAM_SOFTCAP,
            c.FAM_BEAM_CONV_KEYS,
            c.FAM_BEAM_SELECTOR_KEYS,
            c.FAM_BEAM_FC,
            c.FAM_BEAM_BARE_NAMES,
            c.FAM_BEAM_NV_NO_MULT,
            c.FAM_BEAM_NV_NO_EMBED_SCALE,
            c.FAM_BEAM_NV_NO_V_SCALE,
        )
        rocm_cites = (
            (
                c.FAM_BEAM_ROCM,
                c.FAM_BEAM_ROCM_SOFTCAP,
                c.FAM_BEAM_ROCM_MULT,
                c.FAM_BEAM_ROCM_EMBED,
                c.FAM_BEAM_ROCM_V_SCALE,
            )
            if rocm
            else (c.FAM_BEAM_ROCM_ABSENT,)
        )
        facts += [
            fact(
                "Beam DFlash2 drafters (DFlash2BeamDraftModel, vllm.models.beam): every layer sliding, not "
                "causal, dflash_config.final_logit_softcapping and the conv / selector keys required, fc "
                "built hidden_size wide per tap; the NVIDIA path reads no embedding, output or value scale"
                + (
                    "; the ROCm path reads them and defaults the softcapping"
                    if rocm
                    else "; no ROCm path yet"
                ),
                *beam_cites,
                *rocm_cites,
            ),
            fact(
                "XPress drafters (Qwen3XPressModel / DFlashQwen3XPressModel): a DFlash trunk plus the "
                "xpress_head refiner; full vocabulary only; xpress_head.mix.L "
                + ("optional (identity mixer without it)" if rocm else "required"),
                c.FAM_XPRESS_REG,
                c.FAM_XPRESS_KEYMAP,
                c.FAM_XPRESS_HEAD,
                c.FAM_XPRESS_SIZES,
                c.FAM_XPRESS_BLOCK,
                c.FAM_XPRESS_FULL_VOCAB,
                c.FAM_XPRESS_MIX_OPTIONAL if rocm else c.FAM_XPRESS_MIX_REQUIRED,
            ),
        ]
        constraints += [
            _r("Beam sliding", _beam_sliding, "DF804", c.FAM_BEAM_SLIDING, c.FAM_QWEN3_LAYER_TYPES),
            _r("Beam not causal", _beam_not_causal, "DF804", c.FAM_BEAM_NOT_CAUSAL),
            _r("Beam fc width", _beam_fc, "DF804", c.FAM_BEAM_FC),
            _r("XPress full vocabulary", _xpress_vocab, "DF804", c.FAM_XPRESS_FULL_VOCAB),
        ]
        requires += [
            _r(
                "Beam softcapping",
                _beam_softcap(rocm),
                "DF803",
                c.FAM_BEAM_SOFTCAP,
                *((c.FAM_BEAM_ROCM_SOFTCAP,) if rocm else ()),
            ),
            _r(
                "Beam conv / selector keys",
                _beam_keys,
                "DF803",
                c.FAM_BEAM_CONV_KEYS,
                c.FAM_BEAM_SELECTOR_KEYS,
            ),
        ]
        ignores.append(
            _r(
                "Beam scales",
                _beam_scales(rocm),
                "DF831",
                c.FAM_BEAM_NV_NO_MULT,
                c.FAM_BEAM_NV_NO_EMBED_SCALE,
                c.FAM_BEAM_NV_NO_V_SCALE,
                *((c.FAM_BEAM_ROCM_MULT,) if rocm else ()),
            )
        )
        if rocm:
            advisories.append(
                _r("XPress identity mixer", _xpress_identity, "DF810", c.FAM_XPRESS_MIX_OPTIONAL)
            )
        else:
            requires.append(_r("XPress mix.L", _xpress_mix, "DF803", c.FAM_XPRESS_MIX_REQUIRED))
    if has("0.34.0"):
        facts.append(
            fact(
                "DFlash2DraftModel with a non-empty top-level no_rope_layers loads as "
                "DFlash2RicursiveDraftModel: the listed layer INDICES run without RoPE",
                c.FAM_RICURSIVE_ROUTE,
                c.FAM_RICURSIVE_REG,
                c.FAM_RICURSIVE_INDEX,
                c.FAM_RICURSIVE_CONTEXT,
            )
        )
        constraints.append(
            _r(READS_NO_ROPE, _nope_out_of_range, "DF804", c.FAM_RICURSIVE_CONTEXT, c.FAM_RICURSIVE_INDEX)
        )
    else:
        requires.append(_r("Ricursive architecture", _ricursive_named, "DF830", c.FAM_RICURSIVE_REG_ABSENT))
        if has("0.28.0"):
            facts.append(
                fact(
                    "no_rope_layers is read nowhere in the DFlash code: every layer rotates",
                    c.FAM_NO_ROPE_UNREAD,
                    c.FAM_NO_ROPE_UNREAD2,
                    c.FAM_NO_ROPE_UNROUTED,
                )
            )
            ignores.append(
                _r("no_rope_layers", _nope_ignored, "DF831", c.FAM_NO_ROPE_UNREAD, c.FAM_NO_ROPE_UNROUTED)
            )
    loads = [fam.LAGUNA] * has("0.25.0") + [fam.MUSE] * has("0.28.0") + [fam.BEAM, fam.XPRESS] * has("0.33.0")
    loads += [fam.RICURSIVE] * has("0.34.0")
    # the registry names the release check scans (the bare Muse alias carries no DFlash in its name)
    archs = {
        fam.LAGUNA: (fam.LAGUNA_ARCH,),
        fam.MUSE: (fam.MUSE_ARCHS[1],),
        fam.BEAM: (fam.BEAM_ARCH,),
        fam.XPRESS: fam.XPRESS_ARCHS,
        fam.RICURSIVE: (fam.RICURSIVE_ARCH,),
    }
    keys = (
        (
            KeyRead(
                "no_rope_layers",
                "a DFlash2DraftModel with a non-empty list loads as DFlash2RicursiveDraftModel: "
                "the listed layer indices run without RoPE",
                (c.FAM_RICURSIVE_ROUTE, c.FAM_RICURSIVE_INDEX),
                since="0.34.0",
                only="v2",
            ),
        )
        if has("0.34.0")
        else ()
    )
    return FamilyRules(
        tuple(requires),
        tuple(constraints),
        tuple(ignores),
        tuple(advisories),
        tuple(facts),
        tuple(loads),
        tuple(a for f in loads for a in archs[f]),
        keys,
    )
