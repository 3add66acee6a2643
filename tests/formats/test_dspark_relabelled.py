"""A DSpark checkpoint relabelled as DFlash (DFlashDraftModel, with or without a dflash_config) is named DSpark
(DF304), never judged as a DFlash drafter whose extra heads are merely unexpected tensors."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from _kit.cli import run_json
from conftest import FIXTURES, real_config
from dflash2_ckpt.checkpoint.layout import expected_tensors
from dflash2_ckpt.dev.synth import materialise
from dflash2_ckpt.formats.parse import to_spec

GOOD = json.loads((FIXTURES / "good" / "nested-v1" / "config.json").read_text())
HEADS = [
    ("markov_head.down.weight", "BF16", (16, 32)),
    ("markov_head.up.weight", "BF16", (64, 16)),
    ("confidence_head.weight", "BF16", (1, 32)),
]


def _relabelled(with_dflash_config: bool) -> dict[str, Any]:
    """DeepSeek's published DSpark config with a DFlash architecture (and optionally a dflash_config)."""
    cfg = real_config("deepseek-ai_dspark_qwen3_8b_block7")
    cfg["architectures"] = ["DFlashDraftModel"]
    if with_dflash_config:
        cfg["dflash_config"] = {k: cfg[k] for k in ("target_layer_ids", "mask_token_id", "block_size")}
    return cfg


def _trunk() -> list[tuple[str, str, tuple[int, ...]]]:
    spec, _ = to_spec(GOOD)
    assert spec is not None
    return [(e.name, "BF16", e.shape) for e in expected_tensors(spec)]


def _codes(report: dict[str, Any]) -> list[str]:
    return [f["code"] for f in report["findings"]]


@pytest.mark.parametrize("with_dflash_config", [True, False])
def test_relabelled_dspark_is_df304_naming_dspark(tmp_path: Path, with_dflash_config: bool) -> None:
    d = materialise(tmp_path, _relabelled(with_dflash_config), _trunk() + HEADS)
    rc, report = run_json("verify", str(d))
    assert rc == 1 and _codes(report) == ["DF304"]  # before: DF202 warnings (passed) / DF102 dflash_config
    [f] = report["findings"]
    assert "DSpark" in f["message"] and "DFlashDraftModel" in f["message"]
    assert "dflash_config is required" not in f["message"]
    assert {"markov_rank", "enable_confidence_head", "markov_head.*", "confidence_head.*"} <= set(
        f["details"]["evidence"]
    )
    assert report["summary"]["other_drafter"] == "DSpark"


def test_no_engine_is_said_to_load_a_relabelled_dspark(tmp_path: Path) -> None:
    d = materialise(tmp_path, _relabelled(True), _trunk() + HEADS)
    rc, report = run_json("compat", str(d))
    verdicts = {(e["engine"], e["versions"]): e["verdict"] for e in report["engines"]}
    assert rc == 1 and set(verdicts.values()) == {"unsupported"}, verdicts


@pytest.mark.parametrize(
    "key,value",
    [
        ("markov_rank", 16),
        ("enable_confidence_head", True),
        ("markov_head_type", "vanilla"),
        ("dspark_bonus_anchor", False),
    ],
)
@pytest.mark.parametrize("where", ["top", "dflash_config"])
def test_one_dspark_key_names_an_otherwise_dflash_config(
    tmp_path: Path, key: str, value: Any, where: str
) -> None:
    cfg = json.loads(json.dumps(GOOD))
    (cfg if where == "top" else cfg["dflash_config"])[key] = value
    d = materialise(tmp_path, cfg, _trunk())
    rc, report = run_json("verify", str(d))
    assert rc == 1 and _codes(report) == ["DF304"]
    assert report["findings"][0]["details"]["evidence"] == [key if where == "top" else f"dflash_config.{key}"]


@pytest.mark.parametrize("head", HEADS, ids=lambda h: h[0].split(".")[0])
def test_a_dspark_head_tensor_names_an_otherwise_dflash_checkpoint(tmp_path: Path, head: Any) -> None:
    d = materialise(tmp_path, GOOD, _trunk() + [head])
    rc, report = run_json("verify", str(d))
    assert rc == 1 and _codes(report) == ["DF304"]
    assert "DSpark" in report["findings"][0]["message"]


def test_the_dflash_config_itself_still_passes(tmp_path: Path) -> None:
    d = materialise(tmp_path, GOOD, _trunk())
    rc, report = run_json("verify", str(d))
    assert rc == 0 and "DF304" not in _codes(report)
