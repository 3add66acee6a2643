"""The conversions that changed what an engine computes, driven as users run them; each case failed on
e334c89: the assistant export turned causal, a round trip lost num_target_layers, nested -> nested was
refused, a nested V scale went flat where vLLM no longer reads it. The meaning check prints and refuses."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from _kit.cli import invoke
from conftest import FIXTURES

TARGET = FIXTURES / "targets" / "tiny-target"


def _assistant_sliding(tmp_path: Path) -> Path:
    """The Muse-Glimmer export's shape: sliding layers and no is_causal (the class runs them bidirectional)."""
    d = tmp_path / "muse"
    shutil.copytree(FIXTURES / "good" / "assistant-v1", d)
    cfg = json.loads((d / "config.json").read_text())
    cfg.update(layer_types=["sliding_attention"] * 2, sliding_window=16, use_sliding_window=True)
    del cfg["is_causal"]
    (d / "config.json").write_text(json.dumps(cfg))
    return d


def _json(*args: str) -> tuple[int, Any]:
    r = invoke(*args, "--format", "json")
    return r.exit_code, json.loads(r.stdout)


def test_assistant_export_stays_bidirectional_in_every_dialect(tmp_path: Path) -> None:
    src = _assistant_sliding(tmp_path)
    code, _ = _json(
        "convert", str(src), "-o", str(tmp_path / "nested"), "--to", "nested", "--target", str(TARGET)
    )
    assert code == 0
    cfg = json.loads((tmp_path / "nested" / "config.json").read_text())
    assert cfg["is_causal"] is False and cfg["dflash_config"]["causal"] is False
    code, _ = _json(
        "convert", str(src), "-o", str(tmp_path / "flat"), "--to", "flat", "--target", str(TARGET)
    )
    assert code == 0
    assert json.loads((tmp_path / "flat" / "config.json").read_text())["sliding_window_non_causal"] is True
    # and every engine that runs the output runs it bidirectional (None: dflash-mlx runs no v1 drafter)
    code, doc = _json("inspect", str(tmp_path / "nested"))
    assert {v for layer in doc["summary"]["layers"] for v in layer["causal"].values()} == {False, None}


def test_assistant_export_judged_the_way_its_engines_run_it(tmp_path: Path) -> None:
    src = _assistant_sliding(tmp_path)
    code, doc = _json("inspect", str(src))
    causal = doc["summary"]["layers"][0]["causal"]
    assert causal["vllm>=0.34"] is False and causal["transformers>=5.17.0"] is False
    _, doc = _json("verify", str(src), "--engine", "vllm", "--target", str(TARGET))
    assert "DF401" not in {f["code"] for f in doc["findings"]}
    # before 0.33's model-type default vLLM ran sliding layers causal: that release is warned about
    _, doc = _json("verify", str(src), "--engine", "vllm@0.32.0", "--target", str(TARGET))
    assert "DF401" in {f["code"] for f in doc["findings"]}
    _, doc = _json("compat", str(src), "--engine", "transformers")
    assert [e["verdict"] for e in doc["engines"]] == ["loads"]
    assert "DF808" not in {r["code"] for e in doc["engines"] for r in e["reasons"]}


def test_round_trip_keeps_num_target_layers_and_the_plan_lists_it(tmp_path: Path) -> None:
    src = FIXTURES / "good" / "nested-v2"
    assert json.loads((src / "config.json").read_text())["num_target_layers"] == 4
    code, plan = _json(
        "convert",
        str(src),
        "-o",
        str(tmp_path / "flat"),
        "--to",
        "flat",
        "--target",
        str(TARGET),
        "--dry-run",
    )
    assert code == 0
    moved = [c for c in plan["config_changes"] if c["from"] == "num_target_layers"]
    assert moved and moved[0]["action"] != "dropped" and moved[0]["to"] == "num_target_layers"
    assert (
        _json("convert", str(src), "-o", str(tmp_path / "flat"), "--to", "flat", "--target", str(TARGET))[0]
        == 0
    )
    assert _json("convert", str(tmp_path / "flat"), "-o", str(tmp_path / "back"), "--to", "nested")[0] == 0
    assert json.loads((tmp_path / "back" / "config.json").read_text())["num_target_layers"] == 4


def test_nested_to_nested_is_a_copy(tmp_path: Path) -> None:
    src = FIXTURES / "good" / "nested-v2"
    code, doc = _json("convert", str(src), "-o", str(tmp_path / "same"), "--to", "nested")
    assert code == 0 and doc["written"] and doc["config_changes"] == []
    assert json.loads((tmp_path / "same" / "config.json").read_text()) == json.loads(
        (src / "config.json").read_text()
    )
    assert (tmp_path / "same" / "model.safetensors").read_bytes() == (src / "model.safetensors").read_bytes()
    assert {r["status"] for r in doc["meaning"]["engines"]} <= {"same", "reads neither"}


def _v_scale(tmp_path: Path) -> Path:
    d = tmp_path / "mimo"
    shutil.copytree(FIXTURES / "good" / "nested-v1", d)
    cfg = json.loads((d / "config.json").read_text())
    cfg["dflash_config"]["attention_value_scale"] = 0.5
    (d / "config.json").write_text(json.dumps(cfg))
    return d


def test_a_change_an_engine_would_see_is_refused_and_nothing_is_written(tmp_path: Path) -> None:
    src = _v_scale(tmp_path)
    before = {p.name: p.read_bytes() for p in src.iterdir()}
    out = tmp_path / "flat"
    code, doc = _json("convert", str(src), "-o", str(out), "--to", "flat", "--target", str(TARGET))
    assert code == 1 and not out.exists()
    err = doc["error"]
    assert "v_scale" in err["message"] and "--accept-changes v_scale" in err["hint"]
    refused = {(c["engine"], c["field"]) for c in err["meaning"]["refused"]}
    assert ("vllm>=0.34", "v_scale") in refused and ("meaning", "v_scale") in refused
    assert {p.name: p.read_bytes() for p in src.iterdir()} == before  # the source untouched
    # the user names the change: written, and the report still says what changed
    code, doc = _json(
        "convert",
        str(src),
        "-o",
        str(out),
        "--to",
        "flat",
        "--target",
        str(TARGET),
        "--accept-changes",
        "v_scale",
    )
    assert code == 0 and out.is_dir() and doc["meaning"]["accepted"] == ["v_scale"]
    r = invoke("convert", str(src), "-o", str(tmp_path / "x"), "--to", "flat", "--accept-changes", "vibes")
    assert r.exit_code == 2 and "unknown field 'vibes'" in r.output


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_dry_run_shows_what_each_engine_builds(tmp_path: Path, fmt: str) -> None:
    src = _assistant_sliding(tmp_path)
    r = invoke(
        "convert",
        str(src),
        "-o",
        str(tmp_path / "n"),
        "--to",
        "nested",
        "--target",
        str(TARGET),
        "--dry-run",
        "--format",
        fmt,
    )
    assert r.exit_code == 0 and not (tmp_path / "n").exists()
    if fmt == "json":
        rows = {e["engine"]: e for e in json.loads(r.stdout)["meaning"]["engines"]}
        assert rows["vllm>=0.31,<0.33"]["status"] == "repaired"  # it read the source causal; the output right
        assert rows["vllm>=0.34"]["status"] == "same" and rows["meaning"]["status"] == "same"
        assert rows["transformers>=5.17.0"]["status"] == "reads the source only"
    else:
        assert "what each engine builds" in r.stdout and "repaired" in r.stdout
