"""The flat dialect (vllm-project/speculators): DFlash fields at the top level, the transformer nested
in `transformer_layer_config` (docs/contract.md#the-flat-dialect)."""
from __future__ import annotations

from typing import Annotated, Any, Literal, Optional

from pydantic import BaseModel, Field

from .common import MODEL_CONFIG, DrafterScales, NonNegInt, PosInt, TransformerFields, V2Fields


def _schema_requires(*names: str) -> Any:
    """Mark fields required in the JSON Schema while parsing stays lenient: speculators 0.9 refuses a config
    without them ('Field required'), which verify reports as DF130 with every other check still running."""
    def extra(schema: dict[str, Any], cls: Any) -> None:
        have = list(schema.get("required", []))
        schema["required"] = have + [n for n in names if n not in have]
    return extra


class Verifier(BaseModel):
    model_config = MODEL_CONFIG
    name_or_path: Optional[str] = None
    architectures: Optional[list[str]] = None


class SpeculatorsConfig(BaseModel):
    model_config = MODEL_CONFIG | {"json_schema_extra": _schema_requires("verifier")}
    algorithm: Optional[str] = None
    default_proposal_method: Optional[str] = None
    proposal_methods: Optional[list[dict[str, Any]]] = None
    verifier: Optional[Verifier] = None


class FlatV1Config(DrafterScales):
    model_config = MODEL_CONFIG | {"title": "DFlash v1 drafter config (flat speculators dialect)",
                                   "json_schema_extra": _schema_requires("speculators_config")}
    speculators_model_type: Literal["dflash"]
    architectures: Optional[list[str]] = None
    aux_hidden_state_layer_ids: Annotated[list[PosInt], Field(min_length=1)]
    block_size: Optional[PosInt] = None
    mask_token_id: Optional[NonNegInt] = None
    draft_vocab_size: Optional[PosInt] = None
    sample_from_anchor: Optional[bool] = None
    sliding_window_non_causal: Optional[bool] = None
    target_hidden_size: Optional[PosInt] = None
    transformer_layer_config: TransformerFields
    speculators_config: Optional[SpeculatorsConfig] = None
    speculators_version: Optional[str] = None


class FlatV2Config(V2Fields, FlatV1Config):
    model_config = MODEL_CONFIG | {"title": "DFlash2 drafter config (flat speculators dialect)",
                                   "json_schema_extra": _schema_requires("speculators_config")}
    speculators_model_type: Literal["dflash2"]  # type: ignore[assignment]
