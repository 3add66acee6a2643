"""DF13x: speculators loadability (verifier required, also in the flat JSON Schema) and MiMo-style keys."""

from __future__ import annotations

import copy
import json

import jsonschema

from conftest import real_config
from dflash2_ckpt.checks.engine_keys import engine_key_findings
from dflash2_ckpt.formats import schemas
from dflash2_ckpt.formats.parse import to_spec

FLAT = real_config("speculators-0.9.0_tiny-dflash2")
V1 = real_config("z-lab_Qwen3-4B-DFlash-b16")


def findings(cfg: dict) -> list:
    spec, errors = to_spec(cfg)
    assert spec is not None, errors
    return engine_key_findings(spec, cfg), errors


def test_speculators_save_is_loadable() -> None:
    assert findings(FLAT)[0] == []


def test_flat_without_verifier_is_an_error() -> None:
    for drop in (lambda c: c["speculators_config"].pop("verifier"), lambda c: c.pop("speculators_config")):
        cfg = copy.deepcopy(FLAT)
        drop(cfg)
        [f], _ = findings(cfg)
        assert f.code == "DF130" and f.severity == "error" and "Field required" in f.message


def test_flat_schema_marks_the_verifier_required() -> None:
    schema = json.loads(schemas.generate()["flat-v2.schema.json"])
    jsonschema.validate(FLAT, schema)
    for path in (("speculators_config", "verifier"), ("speculators_config",)):
        cfg = copy.deepcopy(FLAT)
        parent = cfg
        for k in path[:-1]:
            parent = parent[k]
        del parent[path[-1]]
        try:
            jsonschema.validate(cfg, schema)
        except jsonschema.ValidationError as e:
            assert path[-1] in e.message
        else:
            raise AssertionError(f"schema accepted a config without {'.'.join(path)}")


def test_mimo_keys_are_modelled_not_unknown() -> None:
    cfg = copy.deepcopy(V1)
    cfg["dflash_config"].update(
        layer_ids=list(cfg["dflash_config"]["target_layer_ids"]),
        use_swa=False,
        swa_window_size=2048,
        attention_sink_bias=False,
    )
    found, parse_findings = findings(cfg)
    assert found == [] and not [f for f in parse_findings if f.code == "DF116"]
    spec, _ = to_spec(cfg)
    assert (
        spec.drafter_extra["swa_window_size"] == 2048 and spec.drafter_extra["attention_sink_bias"] is False
    )


def test_mimo_layer_ids_that_disagree_with_target_layer_ids() -> None:
    cfg = copy.deepcopy(V1)
    cfg["dflash_config"]["layer_ids"] = [2, 10, 18, 26, 34]
    [f], _ = findings(cfg)
    assert f.code == "DF131" and f.field == "dflash_config.layer_ids"


def test_a_swa_window_other_than_sliding_window_splits_the_engines() -> None:
    cfg = copy.deepcopy(V1)
    cfg.update(sliding_window=4096)
    cfg["dflash_config"].update(use_swa=True, swa_window_size=2048)
    [f], _ = findings(cfg)
    assert f.code == "DF132"
    # vllm qwen3_dflash.py: dflash_config.get("swa_window_size", getattr(config, "sliding_window", None))
    assert "reads before sliding_window" in f.message and "requires" not in f.message
    assert (
        'vllm==0.27.1..0.34.0:vllm/model_executor/models/qwen3_dflash.py has `"swa_window_size"'
        in f.details["source"]
    )
    cfg["dflash_config"]["swa_window_size"] = 4096
    assert findings(cfg)[0] == []


def test_sliding_layer_types_take_the_swa_window_in_vllm_without_use_swa() -> None:
    # the window is read for every sliding layer, whether use_swa or layer_types makes it slide
    cfg = copy.deepcopy(V1)
    n = cfg["num_hidden_layers"]
    cfg.update(sliding_window=4096, layer_types=["sliding_attention"] * n)
    cfg["dflash_config"].update(swa_window_size=2048)
    [f], _ = findings(cfg)
    assert f.code == "DF132" and f.details == {**f.details, "swa_window_size": 2048, "sliding_window": 4096}
    cfg["layer_types"] = ["full_attention"] * n  # no sliding layer: the window is never read
    assert findings(cfg)[0] == []


def test_mimo_keys_have_types() -> None:
    cfg = copy.deepcopy(V1)
    cfg["dflash_config"]["use_swa"] = "yes"
    spec, errors = to_spec(cfg)
    assert spec is None and [f.code for f in errors] == ["DF101"]
