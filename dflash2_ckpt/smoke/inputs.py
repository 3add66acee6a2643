"""Smoke inputs: target hidden states for a few blocks of context, an anchor token per request.

By default seeded random hidden states; or real ones from a safetensors file holding
`hidden_states` [n_ctx, n_t·H_t] or [requests, n_ctx, n_t·H_t] (taps concatenated in
target_layer_ids order) and optionally `anchor_ids` [requests].
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import torch
from safetensors import safe_open

from ..errors import SourceError
from ..formats.spec import DraftSpec

DEFAULT_REQUESTS = 2
CONTEXT_BLOCKS = 3


@dataclass
class SmokeInputs:
    hidden: torch.Tensor  # [Q, n_ctx, n_t·H_t] float32
    anchors: torch.Tensor  # [Q] token ids
    seeds: torch.Tensor  # [Q] per-request sampling seeds
    block_size: int
    source: str  # "random" or the file name

    @property
    def requests(self) -> int:
        return int(self.hidden.shape[0])

    @property
    def context_len(self) -> int:
        return int(self.hidden.shape[1])


def _from_file(path: Path, width: int) -> tuple[torch.Tensor, torch.Tensor | None]:
    if not path.is_file():
        raise SourceError("hidden-states file not found", path=str(path))
    try:
        with safe_open(str(path), framework="pt", device="cpu") as f:
            keys = list(f.keys())
            name = "hidden_states" if "hidden_states" in keys else (keys[0] if len(keys) == 1 else None)
            if name is None:
                raise SourceError(
                    f"no `hidden_states` tensor among {keys}",
                    path=str(path),
                    hint="name the tensor hidden_states",
                )
            hidden = f.get_tensor(name).to(torch.float32)
            anchors = f.get_tensor("anchor_ids").long().view(-1) if "anchor_ids" in keys else None
    except (OSError, RuntimeError, ValueError) as e:  # safetensors raises these on a bad file
        raise SourceError(f"cannot read hidden states: {e}", path=str(path)) from None
    if hidden.dim() == 2:
        hidden = hidden.unsqueeze(0)
    if hidden.dim() != 3 or hidden.shape[-1] != width or hidden.shape[1] < 1:
        raise SourceError(
            f"hidden states are {list(hidden.shape)}; the drafter's fc needs "
            f"[n_ctx, {width}] or [requests, n_ctx, {width}]",
            path=str(path),
            hint="concatenate the target taps in target_layer_ids order",
        )
    if anchors is not None and anchors.numel() != hidden.shape[0]:
        raise SourceError(
            f"anchor_ids has {anchors.numel()} entries for {hidden.shape[0]} requests", path=str(path)
        )
    return hidden, anchors


def make_inputs(
    spec: DraftSpec,
    *,
    block_size: int,
    seed: int,
    hidden_states: Path | None = None,
    requests: int = DEFAULT_REQUESTS,
) -> SmokeInputs:
    gen = torch.Generator().manual_seed(seed)
    width = spec.fc_in_features
    anchors = None
    if hidden_states is not None:
        hidden, anchors = _from_file(Path(hidden_states), width)
        source = Path(hidden_states).name
    else:
        hidden = torch.randn(requests, CONTEXT_BLOCKS * block_size, width, generator=gen)
        source = "random"
    q_ = hidden.shape[0]
    if anchors is None:
        anchors = torch.randint(0, spec.vocab_size, (q_,), generator=gen)
    seeds = torch.randint(0, 2**31 - 1, (q_,), generator=gen)
    return SmokeInputs(hidden, anchors, seeds, block_size, source)
