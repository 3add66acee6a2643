"""A MiMo-style drafter (dflash_config.use_swa / swa_window_size / attention_sink_bias) has no home in the
flat dialect: convert refuses it, and compat advises no conversion that would lose them."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

from _kit.cli import invoke_cli

from dflash2_ckpt.cli import main

from conftest import FIXTURES

TARGET = FIXTURES / "targets" / "tiny-target"


def mimo(tmp_path: Path) -> Path:
    d = tmp_path / "mimo"
    shutil.copytree(FIXTURES / "good" / "nested-v1", d)
    cfg = json.loads((d / "config.json").read_text())
    cfg["dflash_config"].update(use_swa=True, swa_window_size=cfg.get("sliding_window") or 16,
                                attention_sink_bias=True)
    (d / "config.json").write_text(json.dumps(cfg))
    return d


def test_nested_to_flat_is_refused_and_nothing_is_written(tmp_path: Path) -> None:
    d = mimo(tmp_path)
    r = invoke_cli(main, ["convert", str(d), "--to", "flat", "-o", str(tmp_path / "flat"),
                                  "--target", str(TARGET)])
    assert r.exit_code == 1 and "attention_sink_bias" in r.output and "use_swa" in r.output
    assert not (tmp_path / "flat").exists()


def test_compat_does_not_advise_it(tmp_path: Path) -> None:
    d = mimo(tmp_path)
    doc = json.loads(invoke_cli(main, ["compat", str(d), "--format", "json"]).output)
    [spec] = [e for e in doc["engines"] if e["engine"] == "speculators"]
    assert spec["verdict"] == "fails" and spec["reasons"][0]["code"] in ("DF813", "DF814")
    assert not any("--to flat" in r["message"] for e in doc["engines"] for r in e["reasons"] if r["code"] == "DF801")


def test_convert_takes_a_subfolder_like_verify(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    shutil.copytree(FIXTURES / "good" / "nested-v2", repo / "dflash")
    r = invoke_cli(main, ["convert", str(repo), "--subfolder", "dflash", "--to", "flat", "-o",
                                  str(tmp_path / "flat"), "--target", str(TARGET)])
    assert r.exit_code == 0, r.output
    assert invoke_cli(main, ["verify", str(tmp_path / "flat")]).exit_code == 0
    r = invoke_cli(main, ["convert", str(repo), "--subfolder", "../x", "--to", "flat", "-o",
                                  str(tmp_path / "f2")])
    assert r.exit_code == 2


def test_inspect_names_the_layer_type_it_has_instead_of_none(tmp_path: Path) -> None:
    d = mimo(tmp_path)
    cfg = json.loads((d / "config.json").read_text())
    cfg.pop("layer_types", None)
    (d / "config.json").write_text(json.dumps(cfg))
    doc = json.loads(invoke_cli(main, ["inspect", str(d), "--format", "json"]).output)
    assert all("dflash_config.use_swa" in layer["type_text"] for layer in doc["summary"]["layers"])
    r = invoke_cli(main, ["inspect", str(d)], env={"COLUMNS": "250"})
    rows = [line for line in r.output.splitlines() if line.startswith("│ 0 ") or line.startswith("│ 1 ")]
    assert rows and all("None" not in x and "not in layer_types" in x for x in rows), r.output


def test_declared_sink_tensors_are_not_unexpected(tmp_path: Path) -> None:
    from _kit.convert import layout_of
    from dflash2_ckpt.dev.synth import materialise
    cfg = json.loads((mimo(tmp_path) / "config.json").read_text())
    heads = cfg["num_attention_heads"]
    sinks = [(f"layers.{i}.self_attn.attention_sink_bias", "F32", (heads,)) for i in range(cfg["num_hidden_layers"])]
    d = materialise(tmp_path / "sinks", cfg, layout_of(cfg) + sinks)
    doc = json.loads(invoke_cli(main, ["verify", str(d), "--format", "json"]).output)
    assert "DF202" not in {f["code"] for f in doc["findings"]}, doc["findings"]
    # undeclared, the same tensors are reported
    cfg["dflash_config"]["attention_sink_bias"] = False
    d2 = materialise(tmp_path / "undeclared", cfg, layout_of(cfg) + sinks)
    doc = json.loads(invoke_cli(main, ["verify", str(d2), "--format", "json"]).output)
    assert "DF202" in {f["code"] for f in doc["findings"]}
