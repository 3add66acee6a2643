"""The `smoke` click command, the public entry point, and the torch-free import promise."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("triton")

import dflash2_ckpt.smoke as smoke_pkg  # noqa: E402
from _kit.cli import invoke_cli  # noqa: E402
from dflash2_ckpt.cli.smoke import smoke_command  # noqa: E402
from dflash2_ckpt.errors import ConfigError, MissingDependencyError  # noqa: E402

from ._smoke_tiny import tiny_embed, tiny_params, tiny_spec, write  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
FIXTURE = ROOT / "fixtures" / "good" / "nested-v2"


def test_importing_the_package_and_command_loads_no_torch():
    code = (
        "import sys; import dflash2_ckpt, dflash2_ckpt.smoke, dflash2_ckpt.cli.smoke; "
        "print('torch' in sys.modules, 'triton' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False False"


def test_missing_dependency_is_a_typed_error(monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "triton" else real(name, *a)
    )
    with pytest.raises(MissingDependencyError, match="triton"):
        smoke_pkg.run_smoke("anything")
    res = invoke_cli(smoke_command, ["anything"])
    assert res.exit_code == 3 and "smoke]" in res.output


def test_unparseable_config_cannot_run(tmp_path):
    class Ckpt:
        spec = None
        tensors: dict = {}
        source = type("S", (), {"label": "x"})()

    with pytest.raises(ConfigError):
        smoke_pkg.run_smoke(Ckpt())


@pytest.mark.skipif(not (FIXTURE / "config.json").is_file(), reason="fixtures not built")
def test_cli_json_on_a_fixture():
    res = invoke_cli(smoke_command, [str(FIXTURE), "--format", "json", "--seed", "2"])
    doc = json.loads(res.output)
    assert res.exit_code == 0, res.output
    assert doc["version"] == "v2" and doc["device"] == "cpu" and doc["triton_mode"] == "interpret"
    assert len(doc["paths"]) == 2 and doc["inputs"]["seed"] == 2
    assert {f["code"] for f in doc["findings"]} <= {"DF705", "DF706", "DF711", "DF714", "DF715"}


@pytest.mark.skipif(not (FIXTURE / "config.json").is_file(), reason="fixtures not built")
def test_cli_exit_codes(tmp_path):
    import shutil

    ck = tmp_path / "ck"
    shutil.copytree(FIXTURE, ck)
    res = invoke_cli(smoke_command, [str(ck), "--block-size", "4"])
    assert res.exit_code == 0 and "result: passed" in res.output
    # an extra tensor in a second, unindexed file still reaches the loader: an error finding
    write(ck, {"stray.weight": torch.zeros(2)}, "extra.safetensors")
    res = invoke_cli(smoke_command, [str(ck), "--format", "json"])
    assert res.exit_code == 1
    assert "DF701" in {f["code"] for f in json.loads(res.output)["findings"]}
    res = invoke_cli(smoke_command, [str(tmp_path / "nowhere")])
    assert res.exit_code == 3
    if not torch.cuda.is_available():
        res = invoke_cli(smoke_command, [str(FIXTURE), "--device", "cuda"])
        assert res.exit_code == 3 and "CUDA" in res.output


def test_run_smoke_accepts_an_opened_checkpoint(tmp_path):
    spec = tiny_spec("v2")
    files = write(tmp_path, {**tiny_params(spec), **tiny_embed(spec)})

    class Source:
        label = "in-memory"

        def local_path(self, name):
            return tmp_path / name

    class Info:
        file = "model.safetensors"

    class Ckpt:
        source = Source()
        tensors = {k: Info() for k in files}

    Ckpt.spec = spec
    r = smoke_pkg.run_smoke(Ckpt(), seed=3)
    assert r.passed and r.checkpoint == "in-memory" and {f.severity for f in r.findings} <= {"info"}
