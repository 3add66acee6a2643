"""`accept --engine vllm` without vLLM: finding its python, the option rules, and `--server URL` against a
stand-in server that speaks the parts of vLLM's HTTP API the command reads (/v1/models, /v1/completions,
the Prometheus /metrics spec-decode counters). tests/vllm_engine runs the real vLLM."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from _kit.cli import run
from dflash2_ckpt.accept.engine_vllm import prometheus
from dflash2_ckpt.engines.runners import vllm_runner as runner
from dflash2_ckpt.errors import MissingDependencyError

ROOT = Path(__file__).resolve().parents[2]
PAIR = ROOT / "fixtures" / "pairs" / "tiny"
BASE = [
    "accept",
    str(PAIR / "drafter-v1"),
    "--target",
    str(PAIR / "target"),
    "--engine",
    "vllm",
    "--max-new-tokens",
    "8",
    "--limit",
    "2",
    "--format",
    "json",
]


def test_prometheus_counters_are_summed_over_labels() -> None:
    text = (
        "# HELP vllm:spec_decode_num_drafts_total Number of spec decoding drafts.\n"
        "# TYPE vllm:spec_decode_num_drafts_total counter\n"
        'vllm:spec_decode_num_drafts_total{engine="0",model_name="m"} 3.0\n'
        'vllm:spec_decode_num_drafts_total{engine="1",model_name="m"} 2.0\n'
        'vllm:spec_decode_num_accepted_tokens_total{engine="0",model_name="m"} 7.0\n'
        'vllm:spec_decode_num_accepted_tokens_created{engine="0",model_name="m"} 1.7e9\n'
        'vllm:spec_decode_num_accepted_tokens_per_pos_total{engine="0",position="0"} 4.0\n'
    )
    assert prometheus(text) == {
        "vllm:spec_decode_num_drafts": 5.0,
        "vllm:spec_decode_num_draft_tokens": 0.0,
        "vllm:spec_decode_num_accepted_tokens": 7.0,
    }


def test_python_is_taken_from_the_option_then_the_environment(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("DFLASH2_CKPT_ENGINE_CACHE", str(tmp_path))  # no cached install there
    monkeypatch.delenv(runner.ENV, raising=False)
    with pytest.raises(MissingDependencyError, match="no vLLM install was found"):
        runner.find_python()
    monkeypatch.setenv(runner.ENV, str(tmp_path / "nope" / "python"))
    with pytest.raises(
        MissingDependencyError, match=r"\$DFLASH2_CKPT_VLLM_PYTHON .* is not an executable python"
    ):
        runner.find_python()
    assert runner.find_python("python3").name.startswith("python")


def test_a_python_without_vllm_is_exit_3_naming_it(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("DFLASH2_CKPT_ENGINE_CACHE", str(tmp_path))
    code, out, _ = run(*BASE, "--vllm-python", str(tmp_path / "missing-python"))
    doc = json.loads(out)
    assert code == 3 and doc["error"]["type"] == "MissingDependencyError"
    assert "--vllm-python" in doc["error"]["message"] and "scripts/vllm_cpu.py" in doc["error"]["hint"]


def test_the_vllm_options_belong_to_the_vllm_engine() -> None:
    code, out, _ = run(
        "accept",
        str(PAIR / "drafter"),
        "--target",
        str(PAIR / "target"),
        "--server",
        "http://127.0.0.1:1",
        "--format",
        "json",
    )
    assert code == 2 and "--engine vllm only" in json.loads(out)["error"]["message"]
    code, out, _ = run(*BASE, "--batch", "2")
    assert code == 2 and "do not apply to --engine vllm" in json.loads(out)["error"]["message"]


class _FakeVllm(BaseHTTPRequestHandler):
    """Greedy 'generation' that repeats token 5, drafting in steps that accept 3 of 7 drafts."""

    drafts = accepted = 0

    def log_message(self, *args: Any) -> None:
        pass

    def _send(self, body: bytes, kind: str = "application/json") -> None:
        self.send_response(200)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        if self.path == "/v1/models":
            self._send(json.dumps({"data": [{"id": "tiny"}]}).encode())
        elif self.path == "/version":
            self._send(b'{"version": "0.32.0"}')
        elif self.path == "/metrics":
            c = type(self)
            self._send(
                (
                    f'vllm:spec_decode_num_drafts_total{{model_name="tiny"}} {c.drafts}\n'
                    f'vllm:spec_decode_num_draft_tokens_total{{model_name="tiny"}} {c.drafts * 7}\n'
                    f'vllm:spec_decode_num_accepted_tokens_total{{model_name="tiny"}} {c.accepted}\n'
                ).encode(),
                "text/plain",
            )
        else:
            self.send_error(404)

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        assert (
            self.path == "/v1/completions" and body["temperature"] == 0.0 and isinstance(body["prompt"], list)
        )
        n = body["max_tokens"]
        steps = 2  # 2 steps of 3 accepted + 1: 8 tokens after the prefill's one
        type(self).drafts += steps
        type(self).accepted += 3 * steps
        self._send(
            json.dumps({"choices": [{"token_ids": [5] * n}], "usage": {"completion_tokens": n}}).encode()
        )


@pytest.fixture()
def fake_server() -> Iterator[str]:
    srv = ThreadingHTTPServer(("127.0.0.1", 0), _FakeVllm)
    t = threading.Thread(target=srv.serve_forever, daemon=True)
    t.start()
    try:
        yield f"http://127.0.0.1:{srv.server_address[1]}"
    finally:
        srv.shutdown()
        srv.server_close()


def test_server_counters_give_tau(fake_server: str) -> None:
    code, out, _ = run(*BASE, "--server", fake_server + "/")
    doc = json.loads(out)
    assert code == 0, doc
    assert doc["engine"] == "vllm" and doc["build"] == "vllm 0.32.0"
    d = doc["engine_details"]
    assert (
        d["server"] == fake_server and d["drafts"] == 4 and d["draft_n"] == 28 and d["draft_n_accepted"] == 12
    )
    assert doc["tau"]["mean"] == pytest.approx(4.0)  # 1 + 12 / 4
    assert doc["acceptance_rate"] == pytest.approx(12 / 28, abs=1e-4)  # rounded in the JSON
    assert [p["steps"] for p in doc["prompts"]] == [2, 2]


@pytest.mark.parametrize("name", ["vllm_probe.py", "vllm_spec.py"])
def test_the_files_vllm_runs_import_nothing_of_the_toolkit(name: str) -> None:
    """They run in vLLM's environment, where dflash2_ckpt is not installed."""
    import ast

    tree = ast.parse((ROOT / "dflash2_ckpt" / "engines" / "runners" / name).read_text())
    imported = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names} | {
        n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)
    }
    assert not any(m.startswith("dflash2_ckpt") for m in imported)
    assert all(n.level == 0 for n in ast.walk(tree) if isinstance(n, ast.ImportFrom))


def test_the_runners_folder_shadows_no_package_its_scripts_import() -> None:
    """vllm_probe.py and vllm_spec.py run as files, so their folder comes first on sys.path: a module there
    named like a package they (or vLLM) import would be imported in its place."""
    import ast

    folder = ROOT / "dflash2_ckpt" / "engines" / "runners"
    modules = {p.stem for p in folder.glob("*.py")}
    for name in ("vllm_probe.py", "vllm_spec.py"):
        tree = ast.parse((folder / name).read_text())
        imported = {
            a.name.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names
        } | {(n.module or "").split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
        assert "vllm" in imported and not modules & (imported | {"vllm", "torch", "transformers"}), modules
        assert "sys.path" not in (folder / name).read_text()
