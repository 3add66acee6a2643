"""diff compares the configs too: a derived checkpoint whose tensors all match but whose config makes an
engine build another drafter (a re-export that rewrote the taps or dropped is_causal) is DF235, per engine."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from _kit.cli import invoke
from conftest import FIXTURES

REF = FIXTURES / "good" / "nested-v2"


def _derived(tmp_path: Path, **dflash: object) -> Path:
    d = tmp_path / "derived"
    shutil.copytree(REF, d)
    cfg = json.loads((d / "config.json").read_text())
    cfg["dflash_config"].update(dflash)
    (d / "config.json").write_text(json.dumps(cfg))
    return d


def test_a_config_that_changes_an_engines_drafter_is_reported(tmp_path: Path) -> None:
    taps = json.loads((REF / "config.json").read_text())["dflash_config"]["target_layer_ids"]
    d = _derived(tmp_path, target_layer_ids=[t + 1 for t in taps])
    r = invoke("diff", str(d), "--reference", str(REF), "--format", "json")
    doc = json.loads(r.stdout)
    assert r.exit_code == 1 and doc["counts"] == {"equal": 36}
    df235 = [f for f in doc["findings"] if f["code"] == "DF235"]
    assert {f["details"]["engine"] for f in df235} >= {"meaning", "vllm>=0.34", "sglang>=0.5.19"}
    assert all(c["field"] == "taps" for f in df235 for c in f["details"]["changes"])


def test_the_same_config_passes(tmp_path: Path) -> None:
    d = _derived(tmp_path)
    r = invoke("diff", str(d), "--reference", str(REF), "--format", "json")
    doc = json.loads(r.stdout)
    assert r.exit_code == 0 and not [f for f in doc["findings"] if f["code"] == "DF235"]
    assert {row["status"] for row in doc["meaning"]["engines"]} <= {"same", "reads neither"}
