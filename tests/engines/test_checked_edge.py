"""The checked edge (issues 37 and 38): a version past the newest, or before the oldest, release whose code was
read is judged as the nearest checked one, and every format says so (DF816, checked_from / checked_through)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from _kit.cli import invoke, run_json
from conftest import FIXTURES
from dflash2_ckpt.engines import by_engine
from dflash2_ckpt.engines.released import requirements
from dflash2_ckpt.engines.versions import parse_version

V2 = str(FIXTURES / "good" / "nested-v2")


def _read(dist: str) -> list[str]:
    """The releases of `dist` whose files the citations name (released.py), oldest first."""
    versions = [r.split("==")[1] for r in requirements() if r.split("==")[0] == dist]
    return sorted(versions, key=lambda v: parse_version(v, "release"))


def test_a_newer_vllm_is_judged_as_the_newest_checked_and_says_so() -> None:
    newest = _read("vllm")[-1]
    rc, doc = run_json("compat", V2, "--engine", "vllm@9.0.0")
    [e] = doc["engines"]
    assert rc == 0 and e["verdict"] == "loads" and e["asked"] == "9.0.0"  # before: "loads", nothing said
    assert e["checked_through"] == newest
    [edge] = [r for r in e["reasons"] if r["code"] == "DF816"]
    assert edge["severity"] == "warning"
    assert edge["message"].startswith(
        f"vLLM 9.0.0 is newer than the newest release checked ({newest}): judged as {newest}"
    )


@pytest.mark.parametrize("engine,dist", [("sglang", "sglang"), ("transformers", "transformers")])
def test_every_engine_flags_a_version_past_its_edge(engine: str, dist: str) -> None:
    newest = _read(dist)[-1]
    _, doc = run_json("compat", V2, "--engine", f"{engine}@9.0.0")
    [e] = doc["engines"]
    assert e["checked_through"] == newest
    assert any(r["code"] == "DF816" and f"({newest})" in r["message"] for r in e["reasons"])


def test_an_older_vllm_is_flagged_like_a_newer_one() -> None:
    oldest = _read("vllm")[0]
    _, doc = run_json("compat", V2, "--engine", "vllm@0.1.0")
    [e] = doc["engines"]
    assert e["checked_from"] == oldest
    [edge] = [r["message"] for r in e["reasons"] if r["code"] == "DF816"]
    assert edge.startswith(
        f"vLLM 0.1.0 is older than the oldest release checked ({oldest}): judged as {oldest}"
    )


def test_a_checked_version_is_not_flagged() -> None:
    for version in _read("vllm"):
        _, doc = run_json("compat", V2, "--engine", f"vllm@{version}")
        assert not [r for e in doc["engines"] for r in e["reasons"] if r["code"] == "DF816"], version


def test_text_and_sarif_say_it_too() -> None:
    newest = _read("vllm")[-1]
    r = invoke("compat", V2, "--engine", "vllm@9.0.0", env={"COLUMNS": "200"})
    assert "DF816" in r.output and f"9.0.0 ({newest} checked)" in r.output  # not the range ">=0.33"
    sarif = json.loads(invoke("compat", V2, "--engine", "vllm@9.0.0", "--format", "sarif").stdout)
    assert "DF816" in {res["ruleId"] for run in sarif["runs"] for res in run["results"]}


def test_verify_with_an_engine_past_the_edge_warns() -> None:
    oldest = _read("vllm")[0]
    rc, doc = run_json("verify", V2, "--engine", "vllm@0.18.0")
    [f] = [f for f in doc["findings"] if f["code"] == "DF816"]
    assert rc == 0 and f["severity"] == "warning" and f"({oldest})" in f["message"]
    rc, _ = run_json("verify", V2, "--engine", "vllm@0.18.0", "--strict")
    assert rc == 1


def test_the_table_without_engines_names_each_edge_once() -> None:
    out = invoke("compat", V2).output.replace("\n", " ")
    assert out.count("releases checked:") == 1
    assert f"vLLM {_read('vllm')[0]}-{_read('vllm')[-1]}" in out
    assert f"SGLang {_read('sglang')[0]}-{_read('sglang')[-1]}" in out


def test_engines_lists_every_engine_with_its_checked_range() -> None:
    rc, doc = run_json("engines")
    assert rc == 0
    by = {e["engine"]: e for e in doc["engines"]}
    assert set(by) == {p.engine for e in by for p in by_engine(e)}
    assert (by["vllm"]["checked_from"], by["vllm"]["checked_through"]) == (
        _read("vllm")[0],
        _read("vllm")[-1],
    )
    assert by["transformers"]["checked_through"] == "5.25.0"  # the newest transformers release read
    assert by["llama.cpp"]["checked_through"].startswith("b")
    for e in doc["engines"]:
        assert [p["id"] for p in e["profiles"]] == [p.id for p in by_engine(e["engine"])]
        # a compiled release (mistralrs) has no readable loader: unverified, with nothing it claims to load
        assert all(p["reads"] or not p["verified"] for p in e["profiles"])
        assert e["profiles"][-1]["drafts"] or not e["profiles"][-1]["verified"]
    text = invoke("engines").output
    assert text.splitlines()[0].startswith(f"vllm (vLLM): releases checked {_read('vllm')[0]}-")
    assert all(len(line) <= 100 for line in text.splitlines()[:-1])


# --- the releases before vllm-project/vllm#43445 / #47453, read from their wheels ---


def _nested_v1(tmp_path: Path, **dflash: object) -> str:
    d = tmp_path / "v1"
    shutil.copytree(FIXTURES / "good" / "nested-v1", d)
    cfg = json.loads((d / "config.json").read_text())
    cfg["dflash_config"].update(dflash)
    cfg.pop("is_causal", None)  # dflash_config.causal alone states the causality
    (d / "config.json").write_text(json.dumps(cfg))
    return str(d)


def _verdict(path: str, ref: str) -> tuple[str, list[str]]:
    _, doc = run_json("compat", path, "--engine", ref)
    [e] = doc["engines"]
    return e["verdict"], [r["code"] for r in e["reasons"] if r["severity"] != "info"]


def test_vllm_0_21_runs_a_causal_drafter_bidirectional(tmp_path: Path) -> None:
    d = _nested_v1(tmp_path, causal=True)
    assert _verdict(d, "vllm@0.21.0") == ("degraded", ["DF808"])  # before: "loads" with causal layers
    assert _verdict(d, "vllm@0.24.0") == ("loads", [])  # 0.23-0.25 read dflash_config.causal
    assert _verdict(d, "vllm@0.27.1") == ("loads", [])


def test_vllm_before_0_26_ignores_the_flat_causality_key(tmp_path: Path) -> None:
    d = tmp_path / "flat"
    shutil.copytree(FIXTURES / "good" / "flat-v1", d)
    cfg = json.loads((d / "config.json").read_text())
    cfg["sliding_window_non_causal"] = False
    cfg["transformer_layer_config"]["layer_types"] = ["sliding_attention"] * cfg["transformer_layer_config"][
        "num_hidden_layers"
    ]
    cfg["transformer_layer_config"]["sliding_window"] = 64
    (d / "config.json").write_text(json.dumps(cfg))
    verdict, codes = _verdict(str(d), "vllm@0.25.0")
    assert verdict == "degraded" and "DF808" in codes  # before: "loads", causal layers
    assert "DF808" not in _verdict(str(d), "vllm@0.26.0")[1]


def test_sglang_before_0_5_14_runs_sliding_layers_bidirectional(tmp_path: Path) -> None:
    d = tmp_path / "sliding"
    shutil.copytree(FIXTURES / "good" / "nested-v1", d)
    cfg = json.loads((d / "config.json").read_text())
    cfg.pop("is_causal", None)
    cfg["dflash_config"].pop("causal", None)
    cfg["layer_types"] = ["sliding_attention"] * cfg["num_hidden_layers"]  # sliding => causal, as meant
    cfg["sliding_window"] = 64
    (d / "config.json").write_text(json.dumps(cfg))
    assert _verdict(str(d), "sglang@0.5.12") == ("degraded", ["DF808"])  # before: judged as 0.5.18, "loads"
    assert _verdict(str(d), "sglang@0.5.15") == ("loads", [])
    _, doc = run_json("compat", str(d), "--engine", "sglang@0.5.9")
    [e] = doc["engines"]  # older than any release read; no DFlash
    assert e["verdict"] == "unsupported" and [r["code"] for r in e["reasons"]] == ["DF816", "DF800"]
