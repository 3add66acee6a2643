"""A wrong JSON type for every key of both dialects: DF101 at that key's JSON path, never a traceback.

The keys come from the pydantic models themselves, so a key added to a dialect later is covered
without editing this file.
"""

from __future__ import annotations

import json
import shutil
import types
import typing
from pathlib import Path
from typing import Any

import pytest
from adv_corpus import GOOD
from adv_harness import run_inprocess
from pydantic import BaseModel

from dflash2_ckpt.formats.common import TransformerFields
from dflash2_ckpt.formats.flat import FlatV2Config
from dflash2_ckpt.formats.nested import DFlashConfigV2, NestedV2Config


def _fields(model: type[BaseModel], prefix: str = "") -> list[tuple[str, Any]]:
    return [(prefix + (f.alias or name), f.annotation) for name, f in model.model_fields.items()]


NESTED = _fields(NestedV2Config) + _fields(DFlashConfigV2, "dflash_config.")
FLAT = _fields(FlatV2Config) + _fields(TransformerFields, "transformer_layer_config.")
# Keys whose wrong type changes what the config *is* rather than one field of it: a number as the
# flat discriminator makes it "another speculators drafter" (DF304), which is the documented finding.
IDENTITY_KEYS = {("flat-v2", "speculators_model_type"): "DF304"}


def _accepts_str(annotation: Any) -> bool:
    """True when a plain string is a valid value (str, Optional[str], Literal[...] of strings)."""
    if annotation is str:
        return True
    origin = typing.get_origin(annotation)
    if origin is typing.Literal:
        return True  # a string other than the literal's is a value error, not a type error
    if origin in (typing.Union, types.UnionType):  # Optional[str] and str | None
        return any(_accepts_str(a) for a in typing.get_args(annotation))
    return False


def wrong_value(annotation: Any) -> Any:
    # strict models: a string is wrong for int / float / bool / list / object, a number for a string
    return 12345 if _accepts_str(annotation) else "not-a-valid-value"


CASES = [("nested-v2", path, ann) for path, ann in NESTED] + [("flat-v2", path, ann) for path, ann in FLAT]


def test_every_key_of_both_dialects_is_covered() -> None:
    assert len(NESTED) > 30 and len(FLAT) > 30
    assert {"dflash_config.conv_kernel_size", "dflash_config.target_layer_ids", "num_target_layers"} <= {
        p for p, _ in NESTED
    }
    assert {"aux_hidden_state_layer_ids", "selector_top_k", "transformer_layer_config.hidden_size"} <= {
        p for p, _ in FLAT
    }


@pytest.mark.parametrize("base,path,annotation", CASES, ids=[f"{b}:{p}" for b, p, _ in CASES])
def test_wrong_type_is_df101_at_its_path(base: str, path: str, annotation: Any, tmp_path: Path) -> None:
    d = tmp_path / "ckpt"
    shutil.copytree(GOOD / base, d)
    cfg = json.loads((d / "config.json").read_text())
    *parents, last = path.split(".")
    node = cfg
    for k in parents:
        node = node[k]
    node[last] = wrong_value(annotation)
    (d / "config.json").write_text(json.dumps(cfg))
    code, report = run_inprocess(["verify", str(d)])
    assert code == 1
    want = IDENTITY_KEYS.get((base, path), "DF101")
    hits = [f for f in report["findings"] if f["code"] == want]
    assert hits, [(f["code"], f["message"]) for f in report["findings"]]
    if want == "DF101":
        assert path in {f.get("field") for f in hits}, [f.get("field") for f in hits]
