"""DF630: files beside the safetensors that carry part of the drafter, named for what they are.

`mask_embedding.pt` holds a MiMo-style drafter's learned embedding for mask_token_id, used instead of the
target's row for that id (near zero in the target: SGLang, which reads no mask embedding, drafted at τ 1.42
in sgl-project/sglang#27924). vLLM reads the file itself, exllamav3 reads a `mask_embedding` tensor from the
safetensors instead, SGLang reads neither. The file is a pickle and is never loaded here: the conversion to
a tensor is a command the user runs (docs/compat.md, "Sidecar files").
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..engines import layout_cites as c
from ..errors import SourceError
from ..findings import Finding

if TYPE_CHECKING:
    from .context import CheckContext

EMITS: frozenset[str] = frozenset({"DF630"})

MASK_SIDECAR = "mask_embedding.pt"
# the one-liner the user runs in their own environment (torch.load with weights_only=True reads tensors and
# plain containers only); written beside the weights as a second safetensors file exllamav3 picks up
CONVERT_MASK = (
    'python -c "import torch; from safetensors.torch import save_file; '
    "s = torch.load('mask_embedding.pt', weights_only=True); "
    "save_file({'mask_embedding': (s['embedding'] if isinstance(s, dict) else s).contiguous()}, "
    "'mask_embedding.safetensors')\""
)


def check(ctx: CheckContext) -> list[Finding]:
    ckpt = ctx.checkpoint
    if ckpt.gguf is not None:
        return []
    try:
        files = ckpt.source.list_files()
    except SourceError:  # a source that cannot list (the files family reports it)
        return []
    found = [f for f in files if f.rsplit("/", 1)[-1] == MASK_SIDECAR]
    if not found:
        return []
    has_tensor = "mask_embedding" in ckpt.tensors
    tensor = (
        "the safetensors also carry a `mask_embedding` tensor"
        if has_tensor
        else f"to give exllamav3 the tensor, run yourself (this toolkit never unpickles): {CONVERT_MASK}"
    )
    details = {
        "role": "mask_embedding",
        "read_by": ["vllm"],
        "tensor_read_by": ["exllamav3"],
        "ignored_by": ["sglang"],
        "tensor_present": has_tensor,
        "command": CONVERT_MASK,
    }
    return [Finding("DF630", _message(name, tensor), file=name, details=details) for name in found]


def _message(name: str, tensor: str) -> str:
    return (
        f"{name} is the drafter's learned mask embedding (the row for mask_token_id that replaces the "
        "target's, which is near zero: without it acceptance falls to ~1.4, sgl-project/sglang#27924). "
        f"vLLM 0.27.1-0.34.0 reads this file itself ({c.VLLM_MASK_PT}); exllamav3 1.6.5 reads a "
        f"`mask_embedding` tensor from the safetensors and not this file ({c.EXL_MASK_TENSOR}); SGLang "
        f"0.5.18-0.5.23 reads neither. Keep the file for vLLM; {tensor}"
    )
