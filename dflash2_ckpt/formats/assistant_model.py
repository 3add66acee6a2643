"""The pydantic model of the assistant dialect (formats/assistant.py says what the dialect is)."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from .common import MODEL_CONFIG, NonNegInt, PosInt, TransformerFields


class AssistantV1Config(TransformerFields):
    model_config = MODEL_CONFIG | {"title": "DFlash v1 drafter config (assistant export dialect)"}
    architectures: list[str] | None = None
    # the published Muse-Glimmer export has none: its embedding and head are the target's
    vocab_size: PosInt | None = None  # type: ignore[assignment]
    target_layer_ids: Annotated[list[NonNegInt], Field(min_length=1)]
    block_size: PosInt | None = None
    mask_token_id: NonNegInt | None = None
    is_causal: bool | None = None
    num_target_layers: PosInt | None = None
    target_hidden_size: PosInt | None = None
