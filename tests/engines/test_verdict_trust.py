"""No verdict says `loads` for what cannot load, and every conversion compat advises works.

Every broken fixture is judged against every profile through `compat --format json`; the finding each
fixture is built to carry (fixtures/broken/MANIFEST.json, written with the fixture, not by compat) must
fail every engine. Every command compat advises on any fixture is run, and its output judged again.
"""

from __future__ import annotations

import json
import re
import shlex
import shutil
from pathlib import Path

import pytest

from _kit.cli import invoke, invoke_cli
from _kit.engines import REAL_NAMES, real_checkpoint
from conftest import FIXTURES, real_config
from dflash2_ckpt.cli import main
from dflash2_ckpt.engines import PROFILES, by_engine
from dflash2_ckpt.formats.parse import to_spec

MANIFEST = json.loads((FIXTURES / "broken" / "MANIFEST.json").read_text())
# fixtures built to carry a verify error (a diff fixture needs its reference to show its finding)
ERRORS = sorted(n for n, m in MANIFEST.items() if not m["strict"] and "reference" not in m)
TARGET = FIXTURES / "targets" / "tiny-target"
ALL_PROFILES = len(PROFILES)


def compat_json(*args: str) -> tuple[int, dict]:
    r = invoke("compat", *args, "--format", "json")
    return r.exit_code, json.loads(r.stdout)


@pytest.mark.parametrize("name", ERRORS)
def test_a_broken_fixture_gets_no_loading_verdict_from_any_engine(name: str) -> None:
    code = MANIFEST[name]["code"]
    rc, doc = compat_json(str(FIXTURES / "broken" / name))
    assert rc == 1
    assert len(doc["engines"]) == ALL_PROFILES
    for e in doc["engines"]:
        where = f"{name} on {e['engine']} {e['versions']}"
        assert e["serve"] is None, where
        if code == "DF304":  # another drafter altogether: unsupported, or a sibling the engine serves
            assert (e["verdict"], [r["code"] for r in e["reasons"]]) in (
                ("unsupported", ["DF800"]),
                ("not-validated", ["DF850"]),
            ), where
            continue
        assert e["verdict"] == "fails", where
        assert any(code in r["message"] for r in e["reasons"] if r["severity"] == "error"), where


def test_a_directory_with_only_a_config_fails_everywhere(tmp_path: Path) -> None:
    shutil.copy(FIXTURES / "good" / "nested-v2" / "config.json", tmp_path / "config.json")
    rc, doc = compat_json(str(tmp_path))
    assert rc == 1
    assert {e["verdict"] for e in doc["engines"]} <= {"fails", "unsupported"}
    assert all("DF601" in e["reasons"][0]["message"] for e in doc["engines"] if e["verdict"] == "fails")
    assert not any(e["serve"] for e in doc["engines"])
    r = invoke("compat", str(tmp_path))
    assert "vllm serve" not in r.output and "loads" not in r.output.replace("load", "").split()


def test_taps_beyond_the_target_fail_every_engine_even_when_named(tmp_path: Path) -> None:
    d = tmp_path / "d"
    shutil.copytree(FIXTURES / "good" / "nested-v2", d)
    cfg = json.loads((d / "config.json").read_text())
    cfg["dflash_config"]["target_layer_ids"] = [0, cfg["num_target_layers"] + 3]
    (d / "config.json").write_text(json.dumps(cfg))
    rc, doc = compat_json(str(d), "--engine", "vllm@0.29.0", "--engine", "sglang")
    assert rc == 1
    assert [e["verdict"] for e in doc["engines"]] == ["fails", "fails"]
    assert all("DF107" in e["reasons"][0]["message"] for e in doc["engines"])


def test_an_error_only_speculators_hits_fails_speculators_only(tmp_path: Path) -> None:
    d = tmp_path / "flat"
    shutil.copytree(FIXTURES / "good" / "flat-v2", d)
    cfg = json.loads((d / "config.json").read_text())
    del cfg["speculators_config"]["verifier"]  # DF130: speculators cannot reload it
    (d / "config.json").write_text(json.dumps(cfg))
    verify = json.loads(invoke("verify", str(d), "--format", "json").stdout)
    assert "DF130" in {f["code"] for f in verify["findings"] if f["severity"] == "error"}
    rc, doc = compat_json(str(d))
    by = {(e["engine"], e["versions"]): e for e in doc["engines"]}
    spec = [e for (engine, _), e in by.items() if engine == "speculators"]
    assert spec and all(e["verdict"] == "fails" and "DF130" in e["reasons"][0]["message"] for e in spec)
    loading = {p.versions.label for p in by_engine("vllm") if "v2" in p.drafts and not p.breakages}
    vllm = [e for (engine, v), e in by.items() if engine == "vllm" and v in loading]
    assert vllm and all(e["verdict"] == "loads" for e in vllm)
    assert rc == 0


def test_audit_shows_the_same_failing_cells(tmp_path: Path) -> None:
    broken = str(FIXTURES / "broken" / "tap-ids-off-by-one")
    r = invoke("audit", broken, "--format", "json", "--cache", str(tmp_path / "cache"))
    rows = json.loads(r.stdout)["rows"]
    cells = {e["verdict"] for e in rows[0]["engines"]}
    assert cells == {"fails"}
    assert r.exit_code == 1


# ------------------------------------------------------------------ every advised command works


def _real_target(root: Path, name: str) -> Path:
    """A target config.json of the published drafter's own geometry (what it was trained against)."""
    spec, _ = to_spec(real_config(name))
    root.mkdir(parents=True)
    if spec is not None:
        cfg = {
            "architectures": ["Qwen3ForCausalLM"],
            "model_type": "qwen3",
            "vocab_size": spec.vocab_size,
            "hidden_size": spec.target_hidden_size or spec.hidden_size,
            "num_hidden_layers": spec.num_target_layers,
            "eos_token_id": 1,
            "pad_token_id": 0,
        }
        (root / "config.json").write_text(json.dumps(cfg))
    return root


def _fixtures(tmp: Path) -> list[tuple[str, Path, Path, bool]]:
    """(label, checkpoint, target, small): a real-shape checkpoint is sparse, so its advice is run --dry-run."""
    out = [(f"good/{p.name}", p, TARGET, True) for p in sorted((FIXTURES / "good").iterdir()) if p.is_dir()]
    out += [
        (f"broken/{p.name}", p, TARGET, True) for p in sorted((FIXTURES / "broken").iterdir()) if p.is_dir()
    ]
    out += [(f"gguf/{p.name}", p, TARGET, True) for p in sorted((FIXTURES / "gguf").glob("*.gguf"))]
    for n in REAL_NAMES:
        ckpt = real_checkpoint(tmp / "real", n)
        small = sum(f.stat().st_size for f in ckpt.iterdir()) < 64 << 20
        out.append((f"real/{n}", ckpt, _real_target(tmp / "targets" / n, n), small))
    return out


def _run_advice(command: str, out: Path, dry_run: bool) -> tuple[int, str]:
    argv = shlex.split(command)
    assert argv[:2] == ["dflash2-ckpt", "convert"], command
    i = argv.index("-o")
    argv[i + 1] = str(out)
    r = invoke_cli(main, argv[1:] + (["--dry-run"] if dry_run else []))
    return r.exit_code, r.output


def _advised(e: dict) -> list[str]:
    """The conversions a verdict advises: a needs-conversion verdict's (DF801), and a refusal's fix (a
    `fails` verdict whose refused names a conversion writes the way the engine loads them)."""
    if e["verdict"] == "needs-conversion":
        [advice] = [r for r in e["reasons"] if r["code"] == "DF801"]
        return [advice["message"].split("`")[1]]
    return [
        c
        for r in e["reasons"]
        if r["code"] == "DF805"
        for c in re.findall(r"`(dflash2-ckpt convert [^`]*)`", r["message"])
    ]


def test_every_advised_conversion_runs_and_then_loads(tmp_path: Path) -> None:
    ran = fixes = 0
    for label, path, target, small in _fixtures(tmp_path):
        rc, doc = compat_json(str(path), "--target", str(target))
        for e, command in ((row, c) for row in doc["engines"] for c in _advised(row)):
            fixes += e["verdict"] == "fails"
            out = tmp_path / "out" / f"{ran}{'.gguf' if '--to gguf' in command else ''}"
            out.parent.mkdir(exist_ok=True)
            code, text = _run_advice(command, out, dry_run=not small)
            where = f"{label} for {e['engine']} {e['versions']}: `{command}`"
            assert code == 0, f"{where} exited {code}: {text}"
            ran += 1
            if not small:
                continue
            _, after = compat_json(str(out))
            [same] = [
                x for x in after["engines"] if (x["engine"], x["versions"]) == (e["engine"], e["versions"])
            ]
            assert same["verdict"] in ("loads", "degraded"), f"{where} then: {same}"
    assert ran >= 10  # the fixtures advise conversions for SGLang, llama.cpp, speculators, dflash-mlx
    assert fixes >= 2  # and broken/tensor-model-prefix a conversion for vLLM's refusal (0.29-0.30, 0.31-)


def _entry(doc: dict, engine: str, versions: str) -> dict:
    [e] = [e for e in doc["engines"] if (e["engine"], e["versions"]) == (engine, versions)]
    return e


def test_a_reduced_vocabulary_drafter_is_not_advised_a_conversion_sglang_cannot_get() -> None:
    path = str(FIXTURES / "good" / "flat-v1-reduced-vocab")
    _, doc = compat_json(path)
    e = _entry(doc, "sglang", ">=0.5.19")
    assert e["verdict"] == "fails" and e["reasons"][0]["code"] == "DF814"
    assert "draft_vocab_size" in e["reasons"][0]["message"]
    # and convert does refuse it, for the reason quoted
    assert invoke("convert", path, "--to", "nested", "-o", "/nonexistent/x", "--dry-run").exit_code == 1


def test_mixed_causality_is_not_advised_to_speculators(tmp_path: Path) -> None:
    path = str(FIXTURES / "broken" / "engines-split-causality")
    _, doc = compat_json(path)
    e = _entry(doc, "speculators", ">=0.9,<0.10")
    assert e["verdict"] == "fails" and e["reasons"][0]["code"] == "DF814"
    r = invoke("convert", path, "--to", "flat", "-o", str(tmp_path / "f"), "--target", str(TARGET))
    assert r.exit_code == 1


def test_vllm_loads_the_assistant_dialect_it_remaps() -> None:
    _, doc = compat_json(str(FIXTURES / "good" / "assistant-v1"), "--target", "org/target")
    e = _entry(doc, "vllm", ">=0.34")
    assert e["verdict"] == "loads"
    assert e["serve"].startswith("vllm serve org/target")
    assert _entry(doc, "sglang", ">=0.5.19")["verdict"] == "needs-conversion"
