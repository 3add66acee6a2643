"""Byte accounting of a quantized drafter: stored bytes and bf16-equivalent bytes by component."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .layout import COMPONENTS, bytes_by_component, component_of

if TYPE_CHECKING:
    from .model import Checkpoint

BF16_BYTES = 2


def quant_summary(ckpt: Checkpoint) -> dict[str, Any] | None:
    """None for a dense checkpoint; else the scheme per module, stored and logical (bf16-equivalent:
    2 bytes per logical element, dense tensors included) bytes per component and their ratio."""
    view = ckpt.quant
    if not view.modules and view.config is None:
        return None
    stored = bytes_by_component(ckpt.tensors.values())
    logical: dict[str, int] = {c: 0 for c in COMPONENTS}
    for name, t in view.logical.items():
        logical[component_of(name)] += t.numel * BF16_BYTES
    total_stored, total_logical = sum(stored.values()), sum(logical.values())
    return {
        "library": view.config.library if view.config else None,
        "config": view.config.where if view.config else None,
        "modules": {m.module: m.label for m in view.modules.values()},
        "stored_bytes_by_component": stored,
        "logical_bytes_by_component": logical,
        "stored_bytes": total_stored,
        "logical_bytes": total_logical,
        "compression_ratio": round(total_logical / total_stored, 4) if total_stored else None,
    }
