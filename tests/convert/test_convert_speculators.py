"""The flat output loads in the real speculators 0.9.0 from another working directory (config, drafter
weights and the verifier's embedding / head from the recorded path). Runs where the `[speculators]` extra
is installed; skipped otherwise (test_convert_verifier.py covers the same fields against the schema)."""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

pytest.importorskip("speculators.models.dflash")
torch = pytest.importorskip("torch")

from safetensors.torch import save_file  # noqa: E402
from speculators import SpeculatorModel, SpeculatorModelConfig  # noqa: E402

from dflash2_ckpt.convert import convert  # noqa: E402

from conftest import FIXTURES  # noqa: E402


@pytest.mark.parametrize("name", ["nested-v1", "nested-v2", "assistant-v1"])
def test_loads_from_any_directory(name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    work = tmp_path / "work"
    verifier = work / "verifier"
    verifier.mkdir(parents=True)
    target = json.loads((FIXTURES / "targets" / "tiny-target" / "config.json").read_text())
    (verifier / "config.json").write_text(json.dumps(target))
    V, H = target["vocab_size"], target["hidden_size"]
    save_file({"model.embed_tokens.weight": torch.randn(V, H), "lm_head.weight": torch.randn(V, H),
               "model.norm.weight": torch.ones(H)}, str(verifier / "model.safetensors"))
    monkeypatch.chdir(work)
    convert(FIXTURES / "good" / name, tmp_path / "flat", to="flat", target="verifier")
    monkeypatch.chdir(tmp_path.anchor)
    cfg = SpeculatorModelConfig.from_pretrained(str(tmp_path / "flat"))
    assert cfg.speculators_config.verifier.name_or_path == str(verifier)
    assert cfg.speculators_config.verifier.architectures == ["Qwen3ForCausalLM"]
    model = SpeculatorModel.from_pretrained(str(tmp_path / "flat"))
    assert type(model).__name__ == ("DFlash2DraftModel" if name.endswith("v2") else "DFlashDraftModel")
