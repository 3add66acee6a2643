"""One drafter of each kind the fixtures cover, at the recall pair's geometry (so llama.cpp's converter
can take the recall target's tokenizer), written by the fixture writer (fixtures/build.py: seeded values).

v1 (DFlash v1, full attention), sliding (DFlash2 with sliding layers and a window), bias (attention biases),
reduced (flat v1 with its own head over part of the vocabulary and d2t / t2d), mimo (v1 with
dflash_config.use_swa / swa_window_size and per-head attention sinks)."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
RECALL = ROOT / "fixtures" / "pairs" / "recall" / "drafter" / "config.json"

Layout = list[tuple[str, str, tuple[int, ...]]]


def _fixtures() -> Any:
    sys.path.insert(0, str(ROOT / "fixtures"))
    import build  # fixtures/build.py

    return build


def _base() -> dict[str, Any]:
    cfg: dict[str, Any] = json.loads(RECALL.read_text())
    return cfg


def _v1() -> dict[str, Any]:
    c = _base()
    c["architectures"] = ["DFlashDraftModel"]
    for k in ("conv_kernel_size", "conv_group_size", "selector_rank", "selector_top_k"):
        c["dflash_config"].pop(k)
    return c


def _sliding() -> dict[str, Any]:
    c = _base()
    c.update(
        layer_types=["sliding_attention"] * c["num_hidden_layers"], sliding_window=16, use_sliding_window=True
    )
    return c


def _bias() -> dict[str, Any]:
    c = _v1()
    c["attention_bias"] = True
    return c


def _reduced(B: Any) -> tuple[dict[str, Any], Layout]:
    base = _base()
    c = B.flat("v1")
    t = c["transformer_layer_config"]
    for k in (
        "hidden_size",
        "intermediate_size",
        "num_attention_heads",
        "num_key_value_heads",
        "head_dim",
        "vocab_size",
        "max_position_embeddings",
    ):
        t[k] = base[k]
    c["mask_token_id"] = base["dflash_config"]["mask_token_id"]
    dv = 128
    c = B.reduced_vocab(c, dv)
    extra: Layout = [
        ("lm_head.weight", "F32", (dv, base["hidden_size"])),
        ("d2t", "I64", (dv,)),
        ("t2d", "BOOL", (base["vocab_size"],)),
    ]
    return c, B.layout(c) + extra


def _mimo(B: Any) -> tuple[dict[str, Any], Layout]:
    c = _v1()
    c["sliding_window"] = 16
    c["dflash_config"].update(use_swa=True, swa_window_size=16, attention_sink_bias=True)
    sinks: Layout = [
        (f"layers.{i}.self_attn.attention_sink_bias", "F32", (c["num_attention_heads"],))
        for i in range(c["num_hidden_layers"])
    ]
    return c, B.layout(c) + sinks


def _plain(make: Callable[[], dict[str, Any]]) -> Callable[[Any], tuple[dict[str, Any], Layout]]:
    def both(B: Any) -> tuple[dict[str, Any], Layout]:
        c = make()
        return c, B.layout(c)

    return both


KINDS: dict[str, Callable[[Any], tuple[dict[str, Any], Layout]]] = {
    "v1": _plain(_v1),
    "sliding": _plain(_sliding),
    "bias": _plain(_bias),
    "reduced": _reduced,
    "mimo": _mimo,
}


def write(kind: str, out: Path) -> Path:
    B = _fixtures()
    cfg, tensors = KINDS[kind](B)
    d: Path = B.write(out, cfg, tensors)
    return d
