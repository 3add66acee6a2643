"""`compat` and `verify --engine` on the command line, the JSON contract, the README engine table, and
every official DFlash2 config passing `verify --strict`."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from _kit.cli import invoke
from _kit.engines import real_checkpoint
from conftest import FIXTURES, ROOT
from dflash2_ckpt.dev.engine_table import engines_table
from dflash2_ckpt.engines import by_id, newest_supporting
from dflash2_ckpt.usecases.verify import verify

GOOD = str(FIXTURES / "good" / "nested-v2")
OFFICIAL = ("z-lab_Qwen3.8-27B-DFlash2", "z-lab_Muse-Glimmer-30B-DFlash2")


@pytest.fixture(scope="module")
def q27(tmp_path_factory: pytest.TempPathFactory) -> str:
    return str(real_checkpoint(tmp_path_factory.mktemp("q27"), OFFICIAL[0]))


def test_json_shape_is_exactly_the_documented_one(q27: str) -> None:
    r = invoke("compat", q27, "--format", "json")
    assert r.exit_code == 0
    doc = json.loads(r.stdout)
    assert list(doc) == ["path", "dialect", "version", "family", "engines"] and doc["family"] is None
    assert (doc["dialect"], doc["version"]) == ("nested", "v2")
    for e in doc["engines"]:
        assert list(e) == [
            "engine",
            "versions",
            "checked_from",
            "checked_through",
            "verdict",
            "reasons",
            "serve",
        ]
        assert all(list(x) == ["code", "severity", "message"] for x in e["reasons"])
    # degraded: mlx-dspark masks sliding layers causal whatever is_causal says; unverified: mistralrs (compiled)
    assert {e["verdict"] for e in doc["engines"]} == {
        "loads",
        "fails",
        "needs-conversion",
        "unsupported",
        "degraded",
        "unverified",
    }


def test_exit_codes(q27: str) -> None:
    assert invoke("compat", q27).exit_code == 0  # some engine loads it
    assert invoke("compat", q27, "--engine", "vllm@0.29.0", "--engine", "sglang").exit_code == 0
    assert invoke("compat", q27, "--engine", "vllm@0.29.0", "--engine", "vllm@0.28.0").exit_code == 1
    assert invoke("compat", q27, "--engine", "llama.cpp").exit_code == 1  # needs conversion
    assert invoke("compat", q27, "--engine", "trt-llm").exit_code == 2
    assert invoke("compat", q27, "--engine", "vllm@0.28.1").exit_code == 2
    assert invoke("compat", str(FIXTURES / "no-such-dir")).exit_code == 3  # cannot read it
    assert invoke("compat", str(FIXTURES / "real")).exit_code == 1  # no drafter: nothing loads


def test_no_profile_loads_a_dspark_drafter(tmp_path: Path) -> None:
    d = real_checkpoint(tmp_path, "deepseek-ai_dspark_qwen3_8b_block7")
    assert invoke("compat", str(d)).exit_code == 1


def test_text_output_names_verdicts_and_the_serve_commands(q27: str) -> None:
    r = invoke("compat", q27, "--target", "Qwen/Qwen3.8-27B")
    for needle in (
        "needs-conversion",
        "unsupported",
        "vllm serve Qwen/Qwen3.8-27B",
        "--speculative-draft-model-path",
        "--to",
    ):
        assert needle in r.output
    # vLLM 0.28.0's load failure is history: shown with --verbose, with its citation
    assert "attention_conv" not in r.output
    full = invoke("compat", q27, "--target", "Qwen/Qwen3.8-27B", "--verbose").output
    assert "attention_conv" in full and "vllm==0.28.0:" in " ".join(full.replace("│", " ").split())
    # the conversion command (the table may wrap it inside its cell): convert reads --target from a local
    # directory, so the Hub target is the download that makes one, not the argument
    text = " ".join(r.output.replace("│", " ").split())
    assert "gguf -o DRAFTER.gguf --target TARGET" in text and "--target Qwen/Qwen3.8-27B" not in text
    assert "hf download Qwen/Qwen3.8-27B config.json" in text


@pytest.mark.parametrize("name", OFFICIAL)
def test_official_dflash2_configs_pass_verify_strict_with_no_warning(tmp_path: Path, name: str) -> None:
    d = real_checkpoint(tmp_path, name)
    r = invoke("verify", str(d), "--strict", "--format", "json")
    assert r.exit_code == 0, r.output
    assert json.loads(r.output)["findings"] == []


def test_a_real_disagreement_still_warns_naming_the_engines(tmp_path: Path) -> None:
    cfg = json.loads((FIXTURES / "real" / f"{OFFICIAL[0]}.config.json").read_text())
    cfg["dflash_config"]["causal"] = True  # contradicts is_causal: false (bidirectional training)
    d = real_checkpoint(tmp_path, OFFICIAL[0])
    (d / "config.json").write_text(json.dumps(cfg))
    r = verify(d)
    [f] = r.findings
    assert f.code == "DF402" and r.failed(strict=True)
    assert "vLLM >=0.34" in f.message and "SGLang >=0.5.19" in f.message


def test_verify_engine_option(q27: str) -> None:
    assert invoke("verify", q27, "--strict", "--engine", "vllm@0.29.0").exit_code == 0
    r = invoke("verify", q27, "--strict", "--engine", "vllm@0.27.0", "--format", "json")
    assert r.exit_code == 1
    found = json.loads(r.output)["findings"]
    assert [f["details"]["engine"] for f in found] == [
        "vllm>=0.26,<0.28"
    ]  # 0.27.0 lies inside the releases read
    r = invoke("verify", q27, "--engine", "vllm@0.18.0", "--format", "json")
    assert [(f["code"], f["details"]["judged_as"]) for f in json.loads(r.output)["findings"]] == [
        ("DF816", "0.19.1")
    ]
    assert invoke("verify", q27, "--engine", "nope").exit_code == 2


def test_inspect_shows_the_values_engines_fill_next_to_the_checkpoints(tmp_path: Path) -> None:
    cfg = json.loads((FIXTURES / "real" / f"{OFFICIAL[0]}.config.json").read_text())
    del cfg["rope_parameters"]
    d = real_checkpoint(tmp_path, OFFICIAL[0])
    (d / "config.json").write_text(json.dumps(cfg))
    doc = json.loads(invoke("inspect", str(d), "--format", "json").output)
    views = {v["engine"]: v["defaults"] for v in doc["summary"]["engines"]}
    assert views["vllm>=0.34"]["rope_theta"] == {
        "checkpoint": None,
        "engine": 1_000_000.0,
        "filled": True,
        "source": views["vllm>=0.34"]["rope_theta"]["source"],
    }
    assert views["sglang>=0.5.19"]["target_layer_ids"]["engine"] == [5, 19, 33, 47, 61]
    assert views["vllm>=0.34"]["causality"] == {
        "checkpoint": "bidirectional",
        "engine": "bidirectional",
        "filled": False,
        "source": views["vllm>=0.34"]["causality"]["source"],
    }
    # every engine's newest release that reads a nested DFlash2 drafter, whichever engines the registry holds
    assert set(views) == {p.id for p in newest_supporting("v2") if "nested" in p.reads}
    assert {"vllm", "sglang", "z-lab"} <= {by_id(i).engine for i in views}
    assert views["exllamav3>=1.6.5"]["rope_theta"]["engine"] == 10000.0  # read_rope_settings_default
    text = invoke("inspect", str(d)).output
    assert "keys engines may fill by default" in text and "1000000.0" in text


def test_docs_engine_table_is_current() -> None:
    page = (ROOT / "docs" / "compat.md").read_text()
    assert engines_table() in page, "regenerate: python -m dflash2_ckpt.dev.doc_tables"


def test_compat_does_not_import_torch(q27: str) -> None:
    code = (
        "import sys; from dflash2_ckpt.cli import main\n"
        "try:\n    main(['compat', sys.argv[1]])\nexcept SystemExit:\n    pass\n"
        "assert 'torch' not in sys.modules, 'torch imported'"
    )
    r = subprocess.run(
        [sys.executable, "-c", code, q27],
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
    )
    assert r.returncode == 0, r.stderr


@pytest.mark.parametrize("fmt", ["sarif", "github"])
def test_compat_plugs_into_every_reporter(q27: str, fmt: str) -> None:
    r = invoke("compat", q27, "--engine", "vllm@0.28.0", "--format", fmt)
    assert r.exit_code == 1 and "DF802" in r.stdout
    if fmt == "sarif":
        import jsonschema

        schema = json.loads((ROOT / "tests" / "report" / "sarif-schema-2.1.0.json").read_text())
        jsonschema.Draft7Validator(schema).validate(json.loads(r.stdout))


def test_unknown_engine_with_json_is_one_error_document(q27: str) -> None:
    r = invoke("compat", q27, "--engine", "vllm@0.28.1", "--format", "json")
    assert r.exit_code == 2
    assert "no vllm profile covers 0.28.1" in json.loads(r.stdout)["error"]["message"]
