"""DF13x: config keys an engine reads beyond the schema, checked where an engine would load them differently;
DF121: such a key this toolkit does not check, named with the releases that read it (engines/read_keys.py).

- speculators 0.9 cannot reload a flat config without speculators_config.verifier (pydantic: Field required).
- vLLM's DFlash reads MiMo-style dflash_config.layer_ids before target_layer_ids (vllm model_executor/models/
  qwen3_dflash.py _resolve_dflash_layer_ids), and windows a sliding layer by dflash_config.swa_window_size
  before sliding_window, where the other engines read sliding_window (released.py VLLM_SWA_WINDOW).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ..engines import released as r
from ..engines.read_keys import reader_of
from ..findings import Finding
from ..formats.spec import DraftSpec

if TYPE_CHECKING:
    from .context import CheckContext

EMITS: frozenset[str] = frozenset({"DF121", "DF130", "DF131", "DF132"})


def check(ctx: CheckContext) -> list[Finding]:
    spec = ctx.spec
    return [] if spec is None else engine_key_findings(spec, ctx.checkpoint.config or {})


def engine_read_key(f: Finding, dialect: str | None) -> Finding:
    """DF116 (a key the schema does not model) becomes DF121 where an engine release reads the key
    (engines/read_keys.py): "no engine reads it" would be a wrong promise there."""
    known = reader_of(f.field, dialect) if f.code == "DF116" and f.field else None
    if known is None:
        return f
    checked = f"Checked here: {known.checked}" if known.checked else "This toolkit does not check its value"
    return Finding(
        "DF121",
        f"{f.field} is read by {known.readers}: {known.effect}. {checked}; it is kept verbatim",
        field=f.field,
        details={"readers": known.readers, "source": known.source},
    )


def engine_key_findings(spec: DraftSpec, config: Mapping[str, Any]) -> list[Finding]:
    out = []
    if spec.dialect == "flat":
        sc = config.get("speculators_config")
        if not isinstance(sc, dict) or not isinstance(sc.get("verifier"), dict):
            where = "speculators_config.verifier" if isinstance(sc, dict) else "speculators_config"
            out.append(
                Finding(
                    "DF130",
                    f"{where} is missing: speculators 0.9 cannot reload this drafter for "
                    "fine-tuning (pydantic 'Field required'). Add speculators_config.verifier "
                    "{name_or_path, architectures} naming the target model",
                    field=where,
                    details={"source": "vllm-project/speculators 0.9.0"},
                )
            )
    extra = spec.drafter_extra
    layer_ids = extra.get("layer_ids")
    if isinstance(layer_ids, list) and tuple(layer_ids) != spec.target_layer_ids:
        out.append(
            Finding(
                "DF131",
                f"dflash_config.layer_ids = {layer_ids} but target_layer_ids = "
                f"{list(spec.target_layer_ids)}: vLLM's DFlash reads layer_ids first, the other engines "
                "target_layer_ids. Keep one (target_layer_ids)",
                field="dflash_config.layer_ids",
                details={"layer_ids": layer_ids, "target_layer_ids": list(spec.target_layer_ids)},
            )
        )
    window = extra.get("swa_window_size")
    # vLLM slides a layer when use_swa is set or layer_types says so, and then takes dflash_config.swa_window_size
    # before sliding_window; SGLang reads sliding_window first, the z-lab reference and mlx-vlm sliding_window only
    sliding = bool(extra.get("use_swa")) or "sliding_attention" in spec.layer_types
    if sliding and window is not None and window != spec.sliding_window:
        out.append(
            Finding(
                "DF132",
                f"dflash_config.swa_window_size = {window} but sliding_window = "
                f"{spec.sliding_window}: vLLM's DFlash windows its sliding layers by swa_window_size, "
                "which it reads before sliding_window; SGLang, mlx-vlm and the z-lab reference window "
                "them by sliding_window, so the engines attend over different spans",
                field="dflash_config.swa_window_size",
                details={
                    "swa_window_size": window,
                    "sliding_window": spec.sliding_window,
                    "source": f"{r.VLLM_SWA_WINDOW}; {r.SGLANG_SLIDING_FIRST}",
                },
            )
        )
    return out
