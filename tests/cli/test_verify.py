"""The CLI contract: exit codes, JSON on stdout, selectors, schema staleness, README code table, no torch."""

from __future__ import annotations

import json
import subprocess
import sys

from _kit.cli import invoke, invoke_cli, one_json, run
from _kit.smoke import stand_in_smoke
from conftest import FIXTURES, ROOT
from dflash2_ckpt.cli import codes_table, main
from dflash2_ckpt.formats import schemas

GOOD = str(FIXTURES / "good" / "nested-v2")


def test_exit_codes() -> None:
    assert invoke("verify", GOOD).exit_code == 0
    assert invoke("verify", str(FIXTURES / "broken" / "fc-wrong-shape")).exit_code == 1
    assert invoke("verify", str(FIXTURES / "broken" / "causality-unstated")).exit_code == 0
    assert invoke("verify", str(FIXTURES / "broken" / "causality-unstated"), "--strict").exit_code == 1
    assert invoke("verify", GOOD, "--select", "DF999").exit_code == 2
    assert invoke("verify", GOOD, "--format", "yaml").exit_code == 2


def test_missing_path_is_exit_3_with_one_line(tmp_path) -> None:
    r = invoke_cli(main, ["verify", str(tmp_path / "nope")])
    assert r.exit_code == 3
    assert "Traceback" not in r.output and "no such file or directory" in r.output


def test_json_is_one_document_with_codes() -> None:
    r = invoke("verify", str(FIXTURES / "broken" / "tensor-missing"), "--format", "json")
    doc = json.loads(r.output)
    assert doc["passed"] is False and doc["counts"]["error"] == 1
    [f] = doc["findings"]
    assert f["code"] == "DF201" and f["tensor"] == "layers.1.mlp.up_proj.weight" and f["severity"] == "error"


def test_select_prefix_and_ignore_specific() -> None:
    path = str(FIXTURES / "broken" / "codebook-weight-suffix")
    assert invoke("verify", path, "--select", "DF4").exit_code == 0
    assert invoke("verify", path, "--select", "DF2", "--ignore", "DF206").exit_code == 0
    assert invoke("verify", path, "--ignore", "DF2", "--select", "DF206").exit_code == 1


def test_inspect_shows_geometry_causality_and_bytes() -> None:
    r = invoke("inspect", GOOD)
    assert r.exit_code == 0
    for needle in ("geometry", "in-block causality", "bidirectional", "selector", "conv"):
        assert needle in r.output
    doc = json.loads(invoke("inspect", GOOD, "--format", "json").output)
    assert doc["summary"]["layers"][0]["causal"]["vllm>=0.34"] is False


def test_committed_schemas_are_fresh() -> None:
    assert schemas.stale(ROOT / "schemas") == [], "run: dflash2-ckpt schema --write schemas/"


def test_schema_check_detects_staleness(tmp_path) -> None:
    schemas.write(tmp_path)
    assert invoke("schema", "--check", str(tmp_path)).exit_code == 0
    (tmp_path / "flat-v2.schema.json").write_text("{}")
    assert invoke("schema", "--check", str(tmp_path)).exit_code == 1


def test_schemas_validate_real_configs_with_plain_jsonschema() -> None:
    import jsonschema

    for name, key in [
        ("nested-v2", "z-lab_Qwen3.8-27B-DFlash2"),
        ("nested-v1", "z-lab_Qwen3-4B-DFlash-b16"),
        ("flat-v2", "speculators-0.9.0_tiny-dflash2"),
    ]:
        schema = json.loads((ROOT / "schemas" / f"{name}.schema.json").read_text())
        jsonschema.validate(json.loads((FIXTURES / "real" / f"{key}.config.json").read_text()), schema)
    bad = json.loads((FIXTURES / "real" / "z-lab_Qwen3.8-27B-DFlash2.config.json").read_text())
    bad["dflash_config"]["conv_group_size"] = "16"
    schema = json.loads((ROOT / "schemas" / "nested-v2.schema.json").read_text())
    assert list(jsonschema.Draft202012Validator(schema).iter_errors(bad))


def test_docs_list_every_code() -> None:
    page = (ROOT / "docs" / "codes.md").read_text()
    assert codes_table() in page, "regenerate the table: python -m dflash2_ckpt.dev.doc_tables"


def test_header_path_never_imports_torch() -> None:
    code = (
        "import sys; from dflash2_ckpt.cli import main; from dflash2_ckpt.usecases.verify import verify; "
        f"verify({GOOD!r}); assert 'torch' not in sys.modules and 'triton' not in sys.modules, 'torch imported'"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_json_error_document_on_exit_3(tmp_path) -> None:
    code, out, err = run("verify", str(tmp_path / "nope"), "--format", "json")
    doc = one_json(out)["error"]
    assert code == 3 and doc["type"] == "SourceError" and doc["path"] == str(tmp_path / "nope")
    assert doc["hint"] and "no such file" in doc["message"]


def test_usage_mistake_with_json_is_one_document_and_exit_2() -> None:
    code, out, err = run("verify", GOOD, "--select", "DF999", "--format", "json")
    assert code == 2 and one_json(out)["error"]["type"] == "UsageError" and "DF999" in err
    code, out, _ = run("verify", GOOD, "--format", "json", "--no-such-option")
    assert code == 2 and one_json(out)["error"]["type"] == "UsageError"


def test_debug_shows_the_traceback(tmp_path) -> None:
    _, _, err = run("verify", str(tmp_path / "nope"))
    assert "Traceback" not in err
    _, _, err = run("verify", str(tmp_path / "nope"), env={"DFLASH2_CKPT_DEBUG": "1"})
    assert "Traceback" in err and "SourceError" in err


def test_ctrl_c_exits_130(monkeypatch) -> None:
    import dflash2_ckpt.usecases.verify_smoke as gate

    def interrupted(*a, **k):
        raise KeyboardInterrupt

    monkeypatch.setattr(gate, "verify", interrupted)
    code, _, err = run("verify", GOOD)
    assert code == 130 and "interrupted" in err and "Traceback" not in err


def test_ctrl_c_under_json_prints_the_error_document(monkeypatch) -> None:
    import dflash2_ckpt.usecases.verify_smoke as gate

    def interrupted(*a, **k):
        raise KeyboardInterrupt

    monkeypatch.setattr(gate, "verify", interrupted)
    code, out, err = run("verify", GOOD, "--format", "json")
    doc = one_json(out)["error"]
    assert code == 130 and doc["type"] == "KeyboardInterrupt" and doc["exit_code"] == 130
    assert "interrupted" in doc["message"] and doc["hint"]
    code, out, _ = run("verify", GOOD, "--format", "sarif")
    assert code == 130 and json.loads(out)["runs"]


def test_smoke_gets_the_opened_target_source(monkeypatch) -> None:
    """verify --smoke --target org/name opens the repo once and hands that Source to the smoke."""
    from dflash2_ckpt.cli import options
    from dflash2_ckpt.sources import LocalSource

    opened = LocalSource(FIXTURES / "targets" / "tiny-target")
    real_open = options.open_source

    def open_source(path, *args, require_weights=True, **kw):
        # the checkpoint opens as usual; the target "org/target" stands for a Hub repo opened config-only
        return opened if path == "org/target" and not require_weights else real_open(path, *args, **kw)

    monkeypatch.setattr(options, "open_source", open_source)
    seen = stand_in_smoke(monkeypatch)
    code, out, _ = run("verify", GOOD, "--smoke", "--target", "org/target", "--format", "json")
    assert code == 0 and seen["target"] is opened and "smoke" in one_json(out)


def test_smoke_runs_on_the_checkpoint_verify_opened(monkeypatch) -> None:
    """verify --smoke opens the checkpoint once: the smoke gets the Checkpoint verify opened."""
    import dflash2_ckpt.usecases.verify as verify_mod
    from dflash2_ckpt.checkpoint import Checkpoint

    opened = []
    real_open = verify_mod.open_checkpoint

    def counting_open(path):
        opened.append(real_open(path))
        return opened[-1]

    monkeypatch.setattr(verify_mod, "open_checkpoint", counting_open)
    seen = stand_in_smoke(monkeypatch)
    code, out, _ = run("verify", GOOD, "--smoke", "--format", "json")
    assert code == 0 and len(opened) == 1
    assert isinstance(seen["source"], Checkpoint) and seen["source"] is opened[0]
