"""DF3xx: is this DFlash v1, DFlash2, or something else, and do config and tensors agree
(docs/contract.md#telling-drafters-apart)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ..checkpoint import Checkpoint
from ..checkpoint.layout import bytes_by_component
from ..findings import Finding
from ..formats.assistant import ASSISTANT_TENSORS, ENGINE_SUPPORT
from ..formats.detect import V1_ARCH, V2_ARCH, detect_tensors

if TYPE_CHECKING:
    from .context import CheckContext

EMITS: frozenset[str] = frozenset({"DF301", "DF302", "DF303", "DF304", "DF305"})

_OTHER_HINTS = {
    "DSpark": "DSpark drafters have their own runtime (markov head, top-level target_layer_ids); "
    "do not serve them as DFlash. vLLM, SGLang and llama.cpp serve DSpark drafters: `dflash2-ckpt "
    "compat` names the releases (this toolkit does not validate DSpark further)",
    "EAGLE-3": "serve it with the EAGLE-3 method, not DFlash",
}


def check(ctx: CheckContext) -> list[Finding]:
    return identity_findings(ctx.checkpoint)[0]


def covered(ckpt: Checkpoint) -> frozenset[str]:
    """Components whose presence or absence DF301 / DF302 already reported wholesale."""
    return identity_findings(ckpt)[1]


def identity_findings(ckpt: Checkpoint) -> tuple[list[Finding], frozenset[str]]:
    """Findings, and the tensor components they already account for (so DF2xx does not repeat them)."""
    out: list[Finding] = []
    det = ckpt.detection
    if ckpt.config is None or det is None:
        return out, frozenset()
    if not det.is_dflash:
        name = det.other
        if name and det.evidence:
            label = _dflash_label(ckpt.config)
            msg = (
                f"this is a {name} drafter, not DFlash{f', although {label}' if label else ''}: it carries "
                f"{', '.join(det.evidence[:6])}{' ...' if len(det.evidence) > 6 else ''}, which no DFlash drafter "
                f"has. A DFlash engine that skips unknown tensors (SGLang, the z-lab reference) would load the trunk "
                f"without those heads and draft wrongly. "
                f"{_OTHER_HINTS.get(name, '')}"
            ).rstrip()
        elif name:
            msg = f"this is a {name} drafter, not DFlash. {_OTHER_HINTS.get(name, '')}".rstrip()
        else:
            msg = (
                "the config describes no DFlash drafter: no DFlash2DraftModel / DFlashDraftModel architecture, "
                "no dflash_config, no speculators_model_type dflash / dflash2"
            )
        return [
            Finding(
                "DF304", msg, field="architectures", details={"drafter": name, "evidence": list(det.evidence)}
            )
        ], frozenset()

    if det.dialect == "assistant":
        out.append(_assistant_finding(ckpt))
    where = "speculators_model_type" if det.dialect == "flat" else "dflash_config"
    if det.arch_version and det.field_version and det.arch_version != det.field_version:
        if det.dialect == "nested":
            msg = (
                f"architectures says {det.arch_version} but dflash_config "
                f"{'carries' if det.field_version == 'v2' else 'lacks'} the conv / selector keys: SGLang builds "
                "the modules from the fields, vLLM from the architecture, so the engines disagree about what "
                "this drafter is. Make them agree"
            )
        else:
            msg = (
                f"speculators_model_type says {det.field_version} but architectures says {det.arch_version}; "
                "speculators and vLLM route on different keys"
            )
        out.append(
            Finding(
                "DF303",
                msg,
                field=where if det.dialect == "flat" else "architectures",
                details={"architecture": det.arch_version, "fields": det.field_version},
            )
        )

    if not ckpt.tensors:
        return out, frozenset()
    by = bytes_by_component(ckpt.tensors.values())
    total = sum(by.values())
    stored = detect_tensors(ckpt.tensors)
    if det.version == "v1" and stored == "v2":
        lost = by["conv"] + by["selector"]
        out.append(
            Finding(
                "DF301",
                f"a v1 architecture over a file with DFlash2 conv / selector tensors: a v1 loader finds every "
                f"trunk key and silently drops {lost:,} B ({100 * lost / max(total, 1):.1f}% of the weights); the "
                'drafter runs and drafts worse than either version. Set architectures to ["DFlash2DraftModel"] '
                "with the conv / selector keys, or export a genuine v1 checkpoint",
                field="architectures",
                details={
                    "dropped_bytes": lost,
                    "conv_bytes": by["conv"],
                    "selector_bytes": by["selector"],
                    "total_bytes": total,
                },
            )
        )
        return out, frozenset({"conv", "selector"})
    if det.version == "v2" and stored == "v1":
        out.append(
            Finding(
                "DF302",
                "a DFlash2 architecture whose file has no conv and no selector tensors: the engine leaves "
                "them uninitialised (garbage drafts) or runs without them. Export the full DFlash2 state dict, or "
                "declare the checkpoint as v1 (DFlashDraftModel)",
                field="architectures",
                details={"missing_components": ["conv", "selector"]},
            )
        )
        return out, frozenset({"conv", "selector"})
    return out, frozenset()


def _dflash_label(config: Mapping[str, Any]) -> str:
    """What in the config claims DFlash (a relabelled checkpoint): its architecture, dflash_config, discriminator."""
    archs = config.get("architectures")
    said = (
        [a for a in archs if isinstance(a, str) and a in (V1_ARCH, V2_ARCH)]
        if isinstance(archs, list)
        else []
    )
    parts = [f"architectures says {said[0]}"] if said else []
    if "dflash_config" in config:
        parts.append("it has a dflash_config")
    if str(config.get("speculators_model_type")) in ("dflash", "dflash2"):
        parts.append(f"speculators_model_type says {config['speculators_model_type']}")
    return " and ".join(parts)


def _assistant_finding(ckpt: Checkpoint) -> Finding:
    stored = [n for n in ASSISTANT_TENSORS if n in ckpt.tensors]
    archs = (ckpt.config or {}).get("architectures")
    names = (
        f"; {', '.join(stored)} stand for {', '.join(ASSISTANT_TENSORS[n] for n in stored)}" if stored else ""
    )
    return Finding(
        "DF305",
        f"DFlash v1 in the assistant export dialect (architectures {archs}, DFlash keys at the "
        f"top level, no dflash_config){names}. {ENGINE_SUPPORT}",
        field="architectures",
        details={
            "dialect": "assistant",
            "renames": {n: ASSISTANT_TENSORS[n] for n in stored},
            "remapped_by": ["vllm"],
            "not_remapped_by": ["sglang"],
            "native": ["exllamav3", "transformers"],
        },
    )
