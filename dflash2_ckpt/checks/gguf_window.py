"""DF914 / DF915: a sliding-window drafter's window in a GGUF file.

llama.cpp builds sliding-window attention for a DFlash GGUF only when `dflash.attention.sliding_window` is
there and positive, and then requires `dflash.attention.sliding_window_pattern` (src/models/dflash.cpp).
A drafter trained on a window and converted without the key runs full attention in llama.cpp: nothing
raises, acceptance drops (ikawrakow/ik_llama.cpp#2021). Whether the drafter slides is known from the HF
drafter it was converted from (convert's read-back), the source config.json the file carries, or, for a
DFlash2 file with neither, from the family: every published DFlash2 drafter slides (a warning).
"""

from __future__ import annotations

from typing import Any

from ..engines import layout_cites as c
from ..findings import Finding
from ..formats import gguf_names as N
from ..formats.parse import load_config, to_spec
from ..formats.spec import DraftSpec
from ..sources.gguf_header import GGUFHeader

EMITS: frozenset[str] = frozenset({"DF914", "DF915"})


def _slides(spec: DraftSpec) -> bool:
    return any(t == "sliding_attention" for t in spec.layer_types) or bool(spec.drafter_extra.get("use_swa"))


def _embedded(h: GGUFHeader) -> DraftSpec | None:
    raw = h.get(N.KEY_SOURCE_CONFIG)
    if not isinstance(raw, str):
        return None
    try:
        cfg, _ = load_config(raw.encode("utf-8"))
    except UnicodeEncodeError:
        return None
    return to_spec(cfg)[0] if cfg is not None else None


def window_findings(h: GGUFHeader, version: str | None, reference: DraftSpec | None = None) -> list[Finding]:
    window: Any = h.get(N.KEY_WINDOW)
    has_window = isinstance(window, int) and not isinstance(window, bool) and window > 0
    has_pattern = h.get(N.KEY_WINDOW_PATTERN) is not None
    if has_window and has_pattern:
        return []
    src = f"{c.LC_WINDOW_OPTIONAL}; {c.LC_WINDOW_PATTERN}"
    if has_window:
        msg = (
            f"{N.KEY_WINDOW} = {window} without {N.KEY_WINDOW_PATTERN}: llama.cpp requires the per-layer "
            f"pattern once a window is given and stops loading the file ({src}). Re-convert with "
            "`dflash2-ckpt convert --to gguf`, which writes both"
        )
        return [Finding("DF914", msg, field=N.KEY_WINDOW_PATTERN, details={"source": src})]
    known = reference if reference is not None else _embedded(h)
    missing = f"{N.KEY_WINDOW}" + ("" if has_pattern else f" and {N.KEY_WINDOW_PATTERN}")
    if known is not None and _slides(known):
        origin = (
            "the HF drafter it was converted from"
            if reference is not None
            else f"the source config carried in {N.KEY_SOURCE_CONFIG}"
        )
        msg = (
            f"{origin} has sliding-window layers (window {known.sliding_window}) but the GGUF has no "
            f"{missing}: llama.cpp then runs full attention on every layer, nothing raises and acceptance "
            f"drops (ikawrakow/ik_llama.cpp#2021; {src}). Re-convert with `dflash2-ckpt convert --to "
            "gguf`, which writes both keys"
        )
        details = {"window": known.sliding_window, "source": src}
        return [Finding("DF914", msg, field=N.KEY_WINDOW, details=details)]
    if known is None and version == "v2":
        msg = (
            f"a DFlash2 GGUF without {missing}: llama.cpp runs full attention on every layer, and "
            "every published DFlash2 drafter was trained on a sliding window "
            f"(ikawrakow/ik_llama.cpp#2021; {src}). If the drafter slides, re-convert it from the "
            "safetensors with `dflash2-ckpt convert --to gguf`"
        )
        return [Finding("DF915", msg, field=N.KEY_WINDOW, details={"source": src})]
    return []
