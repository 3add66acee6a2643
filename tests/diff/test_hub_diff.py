"""diff against a reference on the Hub: the tensors come by HTTP Range, the receipt pins its commit."""

from __future__ import annotations

import hashlib
import importlib.util
import json
from pathlib import Path

import pytest

from _kit.cli import invoke_cli
from _kit.fakehub import FakeHub
from dflash2_ckpt.cli import main

# find_spec, not import: compressed-tensors imports triton, whose mode tests/smoke/conftest.py picks later
if importlib.util.find_spec("torch") is None or importlib.util.find_spec("compressed_tensors") is None:
    pytest.skip("diff needs the [diff] extra", allow_module_level=True)
QUANTIZED = Path(__file__).resolve().parents[2] / "fixtures" / "quantized" / "w8a16"


def test_diff_against_a_hub_reference_pins_its_commit(
    hub: FakeHub, ckpts: dict[str, Path], tmp_path: Path
) -> None:
    if "nested-v2" not in ckpts:
        pytest.skip("fixtures/good not built")
    sha = hub.add_commit("org/drafter", ckpts["nested-v2"])
    receipt = tmp_path / "receipt.json"
    res = invoke_cli(
        main,
        ["diff", str(QUANTIZED), "--reference", "org/drafter", "--receipt", str(receipt), "--format", "json"],
    )
    assert res.exit_code == 0, res.output
    rec = json.loads(receipt.read_text())
    assert rec["reference"]["commit_sha"] == sha and rec["reference"]["repo_id"] == "org/drafter"
    for name, entry in rec["reference"]["files"].items():
        assert entry["sha256"] == hashlib.sha256((ckpts["nested-v2"] / name).read_bytes()).hexdigest()
    assert json.loads(res.output)["counts"] == {"equal": 21, "quantization-noise": 15}
