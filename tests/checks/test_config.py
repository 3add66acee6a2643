"""Both dialects: typed fields, JSON-path errors, unknown keys kept, one DraftSpec for the same drafter."""

from __future__ import annotations

import copy
import json

import pytest

from conftest import FIXTURES
from dflash2_ckpt.checks.config import spec_rules
from dflash2_ckpt.formats.detect import detect
from dflash2_ckpt.formats.parse import load_config, to_spec

NESTED = json.loads((FIXTURES / "good" / "nested-v2" / "config.json").read_text())
FLAT = json.loads((FIXTURES / "good" / "flat-v2" / "config.json").read_text())


def findings(cfg: dict) -> list:
    spec, found = to_spec(cfg)
    return found + (spec_rules(spec, cfg) if spec else [])


def test_nested_and_flat_of_the_same_drafter_give_the_same_geometry() -> None:
    a, _ = to_spec(NESTED)
    b, _ = to_spec(FLAT)
    for f in (
        "hidden_size",
        "num_hidden_layers",
        "vocab_size",
        "target_layer_ids",
        "block_size",
        "mask_token_id",
        "conv_kernel_size",
        "conv_group_size",
        "selector_rank",
        "selector_top_k",
        "layer_types",
        "sliding_window",
        "rope_theta",
        "head_dim",
        "num_key_value_heads",
    ):
        assert getattr(a, f) == getattr(b, f), f


def test_flat_aux_ids_are_target_ids_plus_one() -> None:
    spec, _ = to_spec(FLAT)
    assert FLAT["aux_hidden_state_layer_ids"] == [t + 1 for t in spec.target_layer_ids]


@pytest.mark.parametrize(
    "path,value,rule",
    [
        (("dflash_config", "block_size"), "8", "integer"),
        (("dflash_config", "conv_group_size"), 0, "greater than or equal to 1"),
        (("hidden_size",), True, "integer"),
        (("rms_norm_eps",), -1.0, "greater than 0"),
        (("layer_types", 1), "chunked_attention", "sliding_attention"),
        (("dflash_config", "target_layer_ids"), [], "at least 1"),
    ],
)
def test_field_errors_name_path_value_and_rule(path, value, rule) -> None:
    cfg = copy.deepcopy(NESTED)
    node = cfg
    for p in path[:-1]:
        node = node[p]
    node[path[-1]] = value
    found = findings(cfg)
    assert [f.code for f in found] == ["DF101"]
    want = ".".join(str(p) for p in path if isinstance(p, str)) + "".join(
        f"[{p}]" for p in path if isinstance(p, int)
    )
    assert found[0].field == want
    assert found[0].details["value"] == value
    assert rule in found[0].details["rule"]


def test_missing_required_v2_key_is_df102() -> None:
    cfg = copy.deepcopy(FLAT)
    del cfg["selector_top_k"]
    found = findings(cfg)
    assert [(f.code, f.field) for f in found] == [("DF102", "selector_top_k")]


def test_unknown_keys_are_kept_and_reported_as_info() -> None:
    cfg = copy.deepcopy(NESTED)
    cfg["my_training_run"] = {"lr": 3e-4}
    cfg["dflash_config"]["future_knob"] = 7
    spec, found = to_spec(cfg)
    assert spec.transformer_extra["my_training_run"] == {"lr": 3e-4}
    assert spec.drafter_extra["future_knob"] == 7
    assert {(f.code, f.field) for f in found} == {
        ("DF116", "my_training_run"),
        ("DF116", "dflash_config.future_knob"),
    }


@pytest.mark.parametrize(
    "raw,needle",
    [
        (b'{"a": NaN}', "NaN"),
        (b"[1, 2]", "not an object"),
        (b"{", "not valid JSON"),
        (b"\xff\xfe", "UTF-8"),
        (b"[" * 100000 + b"]" * 100000, ""),
        (b'{"a": ' + b"9" * 5000 + b"}", "JSON"),
    ],
)
def test_unreadable_config_is_df100(raw: bytes, needle: str) -> None:
    cfg, found = load_config(raw)
    assert cfg is None and [f.code for f in found] == ["DF100"] and needle in found[0].message


def test_duplicate_keys_are_reported() -> None:
    cfg, found = load_config(b'{"vocab_size": 10, "vocab_size": 20}')
    assert cfg == {"vocab_size": 20}
    assert [(f.code, f.field) for f in found] == [("DF117", "vocab_size")]


def test_flat_rules_report_flat_paths() -> None:
    cfg = copy.deepcopy(FLAT)
    cfg["aux_hidden_state_layer_ids"] = [3, 1]
    cfg["transformer_layer_config"]["hidden_size"] = 40  # 16 does not divide 40
    cfg["transformer_layer_config"]["head_dim"] = 8
    found = {f.code: f for f in findings(cfg)}
    assert found["DF107"].field == "aux_hidden_state_layer_ids" and "[3, 1]" in found["DF107"].message
    assert found["DF103"].field == "conv_group_size"


@pytest.mark.parametrize(
    "cfg,dialect,version,other",
    [
        ({"architectures": ["DFlash2DraftModel"], "dflash_config": {}}, "nested", "v2", None),
        ({"architectures": ["DFlashDraftModel"]}, "nested", "v1", None),
        ({"dflash_config": {"target_layer_ids": [1]}}, "nested", "v1", None),
        ({"dflash_config": {"conv_kernel_size": 2}}, "nested", "v2", None),
        ({"speculators_model_type": "dflash2"}, "flat", "v2", None),
        ({"speculators_model_type": "dflash", "architectures": ["DFlash2DraftModel"]}, "flat", "v1", None),
        ({"speculators_model_type": "eagle3"}, "flat", None, "EAGLE-3"),
        ({"architectures": ["Qwen3DSparkModel"], "markov_rank": 4}, None, None, "DSpark"),
        ({"architectures": ["LlamaForCausalLMEagle3"]}, None, None, "EAGLE-3"),
        ({"architectures": ["Qwen3ForCausalLM"]}, None, None, None),
    ],
)
def test_detection(cfg, dialect, version, other) -> None:
    d = detect(cfg)
    assert (d.dialect, d.version, d.other) == (dialect, version, other)


NESTED_V1 = json.loads((FIXTURES / "good" / "nested-v1" / "config.json").read_text())


def _edit(base: dict, change) -> dict:
    cfg = copy.deepcopy(base)
    change(cfg)
    return cfg


def _legacy(cfg: dict) -> None:
    cfg["block_size"] = cfg["dflash_config"].pop("block_size")


@pytest.mark.parametrize(
    "code,base,change,field",
    [
        ("DF113", NESTED, lambda c: c["dflash_config"].pop("mask_token_id"), "dflash_config.mask_token_id"),
        ("DF114", NESTED, lambda c: c["dflash_config"].pop("block_size"), "dflash_config.block_size"),
        ("DF115", NESTED_V1, _legacy, "block_size"),
        ("DF118", NESTED, lambda c: c.update(num_key_value_heads=3), "num_key_value_heads"),
        ("DF119", NESTED, lambda c: c.update(hidden_act="gelu"), "hidden_act"),
    ],
)
def test_cross_field_rules_each_fire_on_their_own(code: str, base: dict, change, field: str) -> None:
    assert not [f for f in findings(base) if f.severity != "info"]
    found = [f for f in findings(_edit(base, change)) if f.code == code]
    assert [f.field for f in found] == [field]
    assert all(
        f.code == code or f.severity == "info" for f in findings(_edit(base, change)) if f.code[:3] == "DF1"
    )
