"""The flat dialect (vllm-project/speculators): DFlash fields at the top level, the transformer nested
in `transformer_layer_config` (docs/contract.md#the-flat-dialect)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

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
    name_or_path: str | None = None
    architectures: list[str] | None = None


class SpeculatorsConfig(BaseModel):
    model_config = MODEL_CONFIG | {"json_schema_extra": _schema_requires("verifier")}
    algorithm: str | None = None
    default_proposal_method: str | None = None
    proposal_methods: list[dict[str, Any]] | None = None
    verifier: Verifier | None = None


class FlatV1Config(DrafterScales):
    model_config = MODEL_CONFIG | {
        "title": "DFlash v1 drafter config (flat speculators dialect)",
        "json_schema_extra": _schema_requires("speculators_config"),
    }
    speculators_model_type: Literal["dflash"]
    architectures: list[str] | None = None
    aux_hidden_state_layer_ids: Annotated[list[PosInt], Field(min_length=1)]
    block_size: PosInt | None = None
    mask_token_id: NonNegInt | None = None
    draft_vocab_size: PosInt | None = None
    sample_from_anchor: bool | None = None
    sliding_window_non_causal: bool | None = None
    target_hidden_size: PosInt | None = None
    transformer_layer_config: TransformerFields
    speculators_config: SpeculatorsConfig | None = None
    speculators_version: str | None = None


class FlatV2Config(V2Fields, FlatV1Config):
    model_config = MODEL_CONFIG | {
        "title": "DFlash2 drafter config (flat speculators dialect)",
        "json_schema_extra": _schema_requires("speculators_config"),
    }
    speculators_model_type: Literal["dflash2"]  # type: ignore[assignment]
