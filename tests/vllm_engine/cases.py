"""The drafters vLLM judges (fixtures/vllm/golden.json): the fixtures as they are on disk, and the kinds
they hold only as variants, written here by the fixture writer (fixtures/build.py: seeded values, so a
rewrite is byte-identical). Every drafter is paired with the target of its geometry."""

from __future__ import annotations

import copy
import json
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
FIX = ROOT / "fixtures"
TINY_TARGET = FIX / "targets" / "tiny-target"  # hidden 32, vocab 64, 4 layers: good/, broken/, quantized/
PAIR = FIX / "pairs" / "tiny"

Layout = list[tuple[str, str, tuple[int, ...]]]


def _builder() -> Any:
    sys.path.insert(0, str(FIX))
    import build  # fixtures/build.py

    return build


def _config(name: str) -> dict[str, Any]:
    cfg: dict[str, Any] = json.loads((FIX / "good" / name / "config.json").read_text())
    return copy.deepcopy(cfg)


def _mixed(B: Any) -> tuple[dict[str, Any], Layout]:
    c = _config("nested-v2")
    c["layer_types"] = ["sliding_attention", "full_attention"]
    return c, B.layout(c)


def _bias(B: Any) -> tuple[dict[str, Any], Layout]:
    c = _config("nested-v1")
    c["attention_bias"] = True
    return c, B.layout(c)


def _sinks(B: Any) -> tuple[dict[str, Any], Layout]:
    """MiMo-style: dflash_config.use_swa over all-full layers, a window, one learned sink logit per head."""
    c = _config("nested-v1")
    c["dflash_config"].update(use_swa=True, swa_window_size=16, attention_sink_bias=True)
    sinks: Layout = [
        (f"layers.{i}.self_attn.attention_sink_bias", "F32", (c["num_attention_heads"],))
        for i in range(c["num_hidden_layers"])
    ]
    return c, B.layout(c) + sinks


def _copies(B: Any) -> tuple[dict[str, Any], Layout]:
    """The target's embedding and head shipped with the drafter (as some exports do)."""
    c = _config("nested-v2")
    shape = (c["vocab_size"], c["hidden_size"])
    return c, B.layout(c) + [("embed_tokens.weight", "F32", shape), ("lm_head.weight", "F32", shape)]


@dataclass(frozen=True)
class Case:
    name: str
    what: str
    drafter: Path | Callable[[Any], tuple[dict[str, Any], Layout]]
    target: Path = TINY_TARGET
    # vLLM loads it, but a weight stays at its initial values: its fused gate_up_proj takes the gate half
    # and marks the whole parameter loaded, so nothing in vLLM says the up half never came
    silent: str | None = None

    def path(self, scratch: Path) -> Path:
        """The drafter's directory: the fixture, or the variant written under scratch."""
        if isinstance(self.drafter, Path):
            return self.drafter
        B = _builder()
        cfg, tensors = self.drafter(B)
        out: Path = B.write(scratch / self.name, cfg, tensors)
        return out

    def num_speculative_tokens(self, drafter: Path) -> int:
        cfg = json.loads((drafter / "config.json").read_text())
        block = (cfg.get("dflash_config") or {}).get("block_size") or cfg.get("block_size") or 8
        return int(block) - 1


def _fixture(group: str, name: str) -> Path:
    return FIX / group / name


CASES = (
    Case("nested-v1", "DFlash v1, nested dialect", _fixture("good", "nested-v1")),
    Case("nested-v2", "DFlash2, nested dialect, sliding layers with a window", _fixture("good", "nested-v2")),
    Case("flat-v1", "DFlash v1, speculators flat dialect", _fixture("good", "flat-v1")),
    Case("flat-v2", "DFlash2, speculators flat dialect", _fixture("good", "flat-v2")),
    Case(
        "flat-v1-reduced-vocab",
        "flat v1 with its own head over half the vocabulary, d2t / t2d",
        _fixture("good", "flat-v1-reduced-vocab"),
    ),
    Case(
        "assistant-v1",
        "the Muse-Glimmer assistant export (encoder.fc names)",
        _fixture("good", "assistant-v1"),
    ),
    Case("mixed-layers", "DFlash2 with one sliding and one full layer", _mixed),
    Case("attention-bias", "DFlash v1 with q/k/v/o biases (attention_bias: true)", _bias),
    Case("mimo-sinks", "v1 with dflash_config.use_swa, swa_window_size and per-head attention sinks", _sinks),
    Case("target-copies", "DFlash2 shipping copies of the target's embed_tokens and lm_head", _copies),
    Case(
        "model-prefix", "tensor names stored with a model. prefix", _fixture("broken", "tensor-model-prefix")
    ),
    Case("unknown-tensor", "a tensor no DFlash2 parameter takes", _fixture("broken", "tensor-unexpected")),
    Case("window-missing", "sliding layers without a window", _fixture("broken", "sliding-window-missing")),
    Case(
        "tensor-missing",
        "a decoder weight missing",
        _fixture("broken", "tensor-missing"),
        silent="layers.1.mlp.up_proj.weight is absent: the up half of layers.1.mlp.gate_up_proj keeps its initial "
        "values",
    ),
    Case(
        "quantized-conv",
        "compressed-tensors export with the conv projections quantized",
        _fixture("broken", "quantized-conv"),
    ),
    Case("fp8", "compressed-tensors FP8 export", _fixture("quantized", "fp8")),
    Case("w8a16", "compressed-tensors W8A16 export", _fixture("quantized", "w8a16")),
    Case("w4a16", "compressed-tensors W4A16 export", _fixture("quantized", "w4a16")),
    Case("nvfp4", "compressed-tensors NVFP4 export", _fixture("quantized", "nvfp4")),
    Case(
        "tiny-pair-v2", "the trained tiny DFlash2 drafter (accept's pair)", PAIR / "drafter", PAIR / "target"
    ),
    Case(
        "tiny-pair-v1",
        "the trained tiny DFlash v1 drafter, assistant export",
        PAIR / "drafter-v1",
        PAIR / "target",
    ),
)


def request(scratch: Path, cases: tuple[Case, ...] = CASES) -> dict[str, Any]:
    """The probe's input (dflash2_ckpt/engines/runners/vllm_probe.py) for these cases."""
    rows = []
    for c in cases:
        d = c.path(scratch)
        rows.append(
            {
                "name": c.name,
                "target": str(c.target),
                "drafter": str(d),
                "num_speculative_tokens": c.num_speculative_tokens(d),
            }
        )
    return {"cases": rows}
