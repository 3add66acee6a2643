"""The pydantic model of each (dialect, version): the one source of the schema. formats/parse.py validates
with them when the fast parse (formats/fast.py) does not accept a config; formats/schemas.py writes them
as JSON Schema; dev/fast_schema.py reduces them to the fast parse's table."""

from __future__ import annotations

from pydantic import BaseModel

from .assistant_model import AssistantV1Config
from .flat import FlatV1Config, FlatV2Config
from .nested import NestedV1Config, NestedV2Config

MODELS: dict[tuple[str, str], type[BaseModel]] = {
    ("nested", "v1"): NestedV1Config,
    ("nested", "v2"): NestedV2Config,
    ("flat", "v1"): FlatV1Config,
    ("flat", "v2"): FlatV2Config,
    ("assistant", "v1"): AssistantV1Config,
}
