"""The flat output loads in the real speculators 0.9.0 from another working directory (config, drafter
weights and the verifier's embedding / head from the recorded path). speculators runs in its own cached
venv (python scripts/speculators_venv.py; .ci/run installs it), or in the one named by
$DFLASH2_CKPT_SPECULATORS_PYTHON, or in this one where the `[speculators]` extra is installed; without any,
the test skips and says why (test_convert_verifier.py covers the same fields against the schema)."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import FIXTURES, ROOT
from dflash2_ckpt.convert import convert

torch = pytest.importorskip("torch")
from safetensors.torch import save_file  # noqa: E402  (after the skip: it imports torch)

PROBE = Path(__file__).with_name("speculators_probe.py")
ENV = "DFLASH2_CKPT_SPECULATORS_PYTHON"


def _python() -> tuple[str | None, str]:
    """The python to load with, or None and why there is none."""
    if os.environ.get(ENV):
        return os.environ[ENV], ""
    if importlib.util.find_spec("speculators") is not None:
        return sys.executable, ""
    res = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "speculators_venv.py"), "--check", "--json"],
        capture_output=True,
        text=True,
    )
    doc = json.loads(res.stdout)
    return doc.get("python"), doc.get("error", "")


PYTHON, REASON = _python()


@pytest.mark.skipif(PYTHON is None, reason=REASON)
@pytest.mark.parametrize("name", ["nested-v1", "nested-v2", "assistant-v1"])
def test_loads_from_any_directory(name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert PYTHON is not None
    work = tmp_path / "work"
    verifier = work / "verifier"
    verifier.mkdir(parents=True)
    target = json.loads((FIXTURES / "targets" / "tiny-target" / "config.json").read_text())
    (verifier / "config.json").write_text(json.dumps(target))
    V, H = target["vocab_size"], target["hidden_size"]
    save_file(
        {
            "model.embed_tokens.weight": torch.randn(V, H),
            "lm_head.weight": torch.randn(V, H),
            "model.norm.weight": torch.ones(H),
        },
        str(verifier / "model.safetensors"),
    )
    monkeypatch.chdir(work)
    convert(FIXTURES / "good" / name, tmp_path / "flat", to="flat", target="verifier")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}  # nothing of this venv leaks in
    res = subprocess.run(
        [PYTHON, str(PROBE), str(tmp_path / "flat")],
        capture_output=True,
        text=True,
        cwd=tmp_path.anchor,
        env=env,
        timeout=600,
    )
    assert res.returncode == 0, res.stderr[-3000:]
    got = json.loads(res.stdout.strip().splitlines()[-1])
    assert got["verifier"] == str(verifier)
    assert got["architectures"] == ["Qwen3ForCausalLM"]
    assert got["model"] == ("DFlash2DraftModel" if name.endswith("v2") else "DFlashDraftModel")
