"""Which quantized modules an engine consumes, drops or refuses (docs/engines.md: engines and versions,
quantized drafters).

Input: module path -> scheme label ({"fc": "w4a16", "layers.0.self_attn.q_proj": "fp8"}), as header
detection reports it. Output: one QuantOutcome per module the engine does not consume as stored.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping

from .profile import QuantOutcome

# vLLM builds these unquantized: the selector's hidden_projection (quant_config=None) and the bare
# parameters (codebooks, conv base_kernel); before 0.31 the conv kernel_projection too.
DENSE_FOR_VLLM = re.compile(
    r"(^|\.)(attention_conv|mlp_conv)\.base_kernel$|"
    r"(^|\.)candidate_selector\.(hidden_projection|predecessor_codebook|successor_codebook)$"
)
CONV_PROJECTION = re.compile(r"(^|\.)(attention_conv|mlp_conv)\.kernel_projection$")
# Drafter projections a weight-quantized checkpoint carries: fc plus the attention and MLP linears.
PROJECTION = re.compile(r"^fc$|(^|\.)(self_attn\.(q|k|v|o)_proj|mlp\.(gate|up|down)_proj)$")

VLLM_QUANT_SOURCE = (
    "vllm-project/vllm#51581, #53116 (thread; the released code builds these linears with the "
    "draft quant config: vllm==0.28.0..0.34.0 qwen3_dflash.py get_draft_quant_config)"
)
SGLANG_FC_SOURCE = (
    "sglang==0.5.18..0.5.23:sglang/srt/models/dflash.py `self.fc = nn.Linear(` and "
    "`# Ignore unexpected weights`; sgl-project/sglang#39087"
)


def vllm_rule(conv_quantizable: bool, dense_source: str) -> Callable[[Mapping[str, str]], list[QuantOutcome]]:
    """vLLM: the draft quant config never reaches packed_modules_mapping (#51581), so a weight-quantized
    drafter projection fails to load; modules vLLM builds unquantized must be dense. From 0.31 the conv
    kernel_projection is built with the draft quant config and may be quantized."""
    dense = (
        DENSE_FOR_VLLM
        if conv_quantizable
        else re.compile(DENSE_FOR_VLLM.pattern + "|" + CONV_PROJECTION.pattern)
    )

    def rule(modules: Mapping[str, str]) -> list[QuantOutcome]:
        out = []
        for module, scheme in sorted(modules.items()):
            if dense.search(module):
                out.append(
                    QuantOutcome(
                        module,
                        scheme,
                        "dense-required",
                        f"{module} is {scheme} but vLLM builds it unquantized: the quantized "
                        "tensors match no parameter",
                        dense_source,
                    )
                )
            elif PROJECTION.search(module) or (conv_quantizable and CONV_PROJECTION.search(module)):
                out.append(
                    QuantOutcome(
                        module,
                        scheme,
                        "fails",
                        f"{module} is {scheme}: the draft quant config never reaches "
                        "packed_modules_mapping -> AttributeError: 'QKVParallelLinear' object has no "
                        "attribute 'weight' (or a dtype mismatch, or silent corruption)",
                        VLLM_QUANT_SOURCE,
                    )
                )
        return out

    return rule


def sglang(modules: Mapping[str, str]) -> list[QuantOutcome]:
    """SGLang: `fc` is a plain linear, so a quantized fc's packed tensors are dropped silently and fc stays
    at random init (acceptance length 1.00, no error)."""
    return [
        QuantOutcome(
            m,
            s,
            "dropped",
            f"{m} is {s}: SGLang's fc is a plain linear, so its packed weight / scale tensors are "
            "dropped and fc stays at random init (acceptance length ~1.00, nothing raises)",
            SGLANG_FC_SOURCE,
        )
        for m, s in sorted(modules.items())
        if m == "fc"
    ]


def refuse_all(engine: str, source: str) -> Callable[[Mapping[str, str]], list[QuantOutcome]]:
    """An engine that reads dense tensors only: every quantized module is a load failure."""

    def rule(modules: Mapping[str, str]) -> list[QuantOutcome]:
        return [
            QuantOutcome(m, s, "fails", f"{m} is {s}: {engine} loads dense drafter tensors only", source)
            for m, s in sorted(modules.items())
        ]

    return rule


CODEBOOK = re.compile(
    r"(^|\.)(candidate_selector\.(predecessor|successor)_codebook|selector_(predecessor|successor))$"
)


def llamacpp(modules: Mapping[str, str]) -> list[QuantOutcome]:
    """llama.cpp consumes ggml-quantized tensors; MXFP4 selector codebooks load but cost acceptance
    (Q4_K codebooks measured fine)."""
    return [
        QuantOutcome(
            m,
            s,
            "degraded",
            f"{m} is {s}: MXFP4 selector codebooks measurably cost acceptance "
            "(Q4_K ones measured fine); keep the codebooks at Q8_0 or higher",
            "docs/engines.md, GGUF (llama-quantize also quantizes the codebooks)",
        )
        for m, s in sorted(modules.items())
        if CODEBOOK.search(m) and s.lower() == "mxfp4"
    ]
