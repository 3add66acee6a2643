"""The pydantic model of the assistant dialect (formats/assistant.py says what the dialect is)."""
from __future__ import annotations

from typing import Annotated, Optional

from pydantic import Field

from .common import MODEL_CONFIG, NonNegInt, PosInt, TransformerFields


class AssistantV1Config(TransformerFields):
    model_config = MODEL_CONFIG | {"title": "DFlash v1 drafter config (assistant export dialect)"}
    architectures: Optional[list[str]] = None
    # the published Muse-Glimmer export has none: its embedding and head are the target's
    vocab_size: Optional[PosInt] = None  # type: ignore[assignment]
    target_layer_ids: Annotated[list[NonNegInt], Field(min_length=1)]
    block_size: Optional[PosInt] = None
    mask_token_id: Optional[NonNegInt] = None
    is_causal: Optional[bool] = None
    num_target_layers: Optional[PosInt] = None
    target_hidden_size: Optional[PosInt] = None
