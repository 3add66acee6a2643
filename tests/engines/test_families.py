"""The DFlash families vLLM loads (formats/families.py, engines/vllm_families.py, docs/families.md), through
the CLI: each fixture of fixtures/families (built by fixtures/families.py) against the verify codes and the
vLLM 0.33.0 / 0.34.0 verdicts its MANIFEST names, which were read from vLLM's code, not run (vLLM 0.32.0's
CPU build behind fixtures/vllm/golden.json has none of these families)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from _kit.cli import run_json, run_output
from conftest import FIXTURES

FAMILIES = FIXTURES / "families"
MANIFEST: dict[str, dict[str, Any]] = json.loads((FAMILIES / "MANIFEST.json").read_text())


def _verdicts(path: Path | str, *engines: str) -> dict[str, tuple[str, list[str]]]:
    args = [a for e in engines for a in ("--engine", e)]
    _, doc = run_json("compat", str(path), *args)
    return {e: (v["verdict"], [r["code"] for r in v["reasons"]]) for e, v in zip(engines, doc["engines"])}


@pytest.mark.parametrize("name", sorted(MANIFEST))
def test_verify_reports_exactly_the_family_findings(name: str) -> None:
    rc, doc = run_json("verify", str(FAMILIES / name))
    codes = sorted(f["code"] for f in doc["findings"] if f["severity"] != "info")
    assert codes == sorted(MANIFEST[name]["verify"])
    assert rc == (1 if any(f["severity"] == "error" for f in doc["findings"]) else 0)
    assert doc["summary"]["family"]["name"] == MANIFEST[name]["family"]
    # a family's own keys and tensors are known: never "unknown key" (DF116) or "not part of the drafter"
    # (DF202)
    assert not {"DF116", "DF202", "DF201"} & {f["code"] for f in doc["findings"]}


@pytest.mark.parametrize("name", sorted(MANIFEST))
def test_vllm_033_and_034_judge_each_family_as_their_code_reads(name: str) -> None:
    got = _verdicts(FAMILIES / name, "vllm@0.33.0", "vllm@0.34.0")
    for engine in ("vllm@0.33.0", "vllm@0.34.0"):
        verdict, codes = MANIFEST[name][engine]
        assert got[engine] == (verdict, codes), engine


@pytest.mark.parametrize("name", ["beam", "xpress"])
def test_releases_before_033_do_not_register_beam_or_xpress(name: str) -> None:
    got = _verdicts(FAMILIES / name, "vllm@0.29.0", "vllm@0.32.0")
    assert {v[0] for v in got.values()} == {"fails"} and all(v[1] == ["DF830"] for v in got.values())


def test_ricursive_is_degraded_on_every_release_with_dflash2_before_034() -> None:
    rc, out = run_output(
        "compat", str(FAMILIES / "ricursive"), "--engine", "vllm@0.29.0", "--engine", "vllm@0.33.0"
    )
    assert rc == 1 and out.count("degraded") == 2
    assert "does not read no_rope_layers (layers 1 were trained without RoPE)" in " ".join(out.split())
    # Laguna has been registered since before DFlash2
    assert _verdicts(FAMILIES / "laguna", "vllm@0.27.1")["vllm@0.27.1"][0] == "loads"


def test_beam_refusals_quote_vllm() -> None:
    _, doc = run_json("compat", str(FAMILIES / "beam-causal"), "--engine", "vllm@0.34.0")
    [reason] = doc["engines"][0]["reasons"]
    assert "asserts `not config.is_causal`" in reason["message"]
    assert "vllm/models/beam/nvidia/dflash2.py has `assert not config.is_causal`" in reason["message"]
    _, doc = run_json("compat", str(FAMILIES / "beam-no-softcap"), "--engine", "vllm@0.34.0")
    [reason] = doc["engines"][0]["reasons"]
    assert 'float(draft_config["final_logit_softcapping"])` (KeyError)' in reason["message"]
    assert "ROCm path defaults it" in reason["message"]


def test_a_mask_copied_into_no_rope_layers_is_warned_with_the_indices_to_write() -> None:
    rc, doc = run_json("verify", str(FAMILIES / "ricursive-mask"))
    [f] = [f for f in doc["findings"] if f["code"] == "DF140"]
    assert rc == 0 and f["severity"] == "warning" and f["field"] == "no_rope_layers"
    assert f["details"]["engine_nope_layers"] == [0, 1] and f["details"]["mask_nope_layers"] == [1]
    rc, out = run_output("verify", str(FAMILIES / "ricursive-mask"), "--format", "sarif")
    sarif = json.loads(out)
    assert "DF140" in {r["ruleId"] for r in sarif["runs"][0]["results"]}


def test_inspect_shows_the_nope_layers_vllm_034_reads() -> None:
    rc, doc = run_json("inspect", str(FAMILIES / "ricursive"))
    assert rc == 0 and [row["nope"] for row in doc["summary"]["layers"]] == [False, True]
    rc, out = run_output("inspect", str(FAMILIES / "ricursive"))
    assert "Ricursive DFlash2 (NoPE layers)" in out and out.count("NoPE on vLLM 0.34+") == 1


def test_compat_text_names_the_family(tmp_path: Path) -> None:
    rc, out = run_output("compat", str(FAMILIES / "xpress-no-mix"), "--engine", "vllm@0.33.0")
    assert rc == 1 and "XPress DFlash" in out and "missing xpress_head.mix.L" in " ".join(out.split())


def test_xpress_head_shape_is_checked(tmp_path: Path) -> None:
    d = tmp_path / "x"
    shutil.copytree(FAMILIES / "xpress", d)
    cfg = json.loads((d / "config.json").read_text())
    cfg["xpress_rank"] = 4  # the stored head is rank 8
    (d / "config.json").write_text(json.dumps(cfg))
    rc, doc = run_json("verify", str(d))
    bad = {f["tensor"] for f in doc["findings"] if f["code"] == "DF203"}
    assert rc == 1 and "xpress_head.w1.weight" in bad and "xpress_head.mix.L" in bad


def test_laguna_draft_vocab_must_be_the_targets(tmp_path: Path) -> None:
    target = tmp_path / "target"
    shutil.copytree(FIXTURES / "targets" / "tiny-target", target)
    cfg = json.loads((target / "config.json").read_text())
    cfg["vocab_size"] = 128
    (target / "config.json").write_text(json.dumps(cfg))
    rc, doc = run_json("verify", str(FAMILIES / "laguna"), "--target", str(target))
    assert rc == 1 and "DF142" in {f["code"] for f in doc["findings"]}


def test_moe_drafter_is_recognised_and_loaded_by_no_release() -> None:
    got = _verdicts(FAMILIES / "moe", "vllm@0.34.0", "sglang@0.5.23")
    assert got["vllm@0.34.0"] == ("fails", ["DF830"])
    rc, doc = run_json("verify", str(FAMILIES / "moe"))
    [f] = [f for f in doc["findings"] if f["code"] == "DF240"]
    assert f["tensor"].startswith("layers.0.mlp.experts.")


def test_muse_alias_is_a_named_architecture_not_any_assistant(tmp_path: Path) -> None:
    d = tmp_path / "other"
    shutil.copytree(FAMILIES / "muse-alias", d)
    cfg = json.loads((d / "config.json").read_text())
    cfg["architectures"], cfg["model_type"] = ["SomeOtherAssistantModel"], "qwen3"
    (d / "config.json").write_text(json.dumps(cfg))
    _, doc = run_json("inspect", str(d))
    assert doc["summary"]["family"] is None
    _, doc = run_json("inspect", str(FAMILIES / "muse-alias"))
    assert doc["summary"]["family"]["architecture"] == "DFlashMuseGlimmerAssistantModel"


def test_convert_carries_no_rope_layers_both_ways(tmp_path: Path) -> None:
    flat, back = tmp_path / "flat", tmp_path / "back"
    rc, out = run_output(
        "convert",
        str(FAMILIES / "ricursive"),
        "--to",
        "flat",
        "-o",
        str(flat),
        "--verifier-name",
        "org/target",
        "--verifier-arch",
        "Qwen3ForCausalLM",
    )
    assert rc == 0, out
    cfg = json.loads((flat / "config.json").read_text())
    # vLLM's flat mapping builds the drafter config from transformer_layer_config: the key must travel there
    assert cfg["transformer_layer_config"]["no_rope_layers"] == [1] and "no_rope_layers" not in cfg
    assert _verdicts(flat, "vllm@0.34.0")["vllm@0.34.0"] == ("loads", ["DF810"])
    rc, out = run_output("convert", str(flat), "--to", "nested", "-o", str(back))
    assert rc == 0, out
    assert json.loads((back / "config.json").read_text())["no_rope_layers"] == [1]


@pytest.mark.parametrize(
    "name,to", [("beam", "flat"), ("xpress", "flat"), ("laguna", "flat"), ("ricursive", "gguf")]
)
def test_convert_refuses_to_drop_a_family(tmp_path: Path, name: str, to: str) -> None:
    out = tmp_path / ("out.gguf" if to == "gguf" else "out")
    args = (
        ["--target", str(FIXTURES / "targets" / "tiny-target")]
        if to == "gguf"
        else ["--verifier-name", "org/target", "--verifier-arch", "Qwen3ForCausalLM"]
    )
    rc, text = run_output("convert", str(FAMILIES / name), "--to", to, "-o", str(out), *args)
    assert rc != 0 and "family" in text and not out.exists()


def test_the_meaning_check_sees_no_rope_layers_dropped() -> None:
    import dataclasses

    from dflash2_ckpt.checkpoint import open_checkpoint
    from dflash2_ckpt.engines.meaning import compare
    from dflash2_ckpt.engines.registry import PROFILES
    from dflash2_ckpt.usecases.compat import drafter_of

    src = drafter_of(open_checkpoint(str(FAMILIES / "ricursive")))
    plain = drafter_of(open_checkpoint(str(FIXTURES / "good" / "nested-v2")))
    out = dataclasses.replace(src, config=plain.config, spec=plain.spec)
    changed = {(c.engine, c.field) for c in compare(src, out, PROFILES).refused}
    assert ("vllm>=0.34", "nope") in changed and ("meaning", "nope") in changed
    assert ("vllm>=0.33,<0.34", "nope") not in changed  # 0.33 never read it


def test_family_refusals_reach_sarif_and_text() -> None:
    rc, out = run_output(
        "compat", str(FAMILIES / "beam-causal"), "--engine", "vllm@0.34.0", "--format", "sarif"
    )
    results = json.loads(out)["runs"][0]["results"]
    assert rc == 1 and [r["ruleId"] for r in results if r["level"] == "error"] == ["DF804"]
    rc, out = run_output("verify", str(FAMILIES / "ricursive-out-of-range"))
    flat = " ".join(out.split())
    assert rc == 1 and "DF141" in flat and "not draft layer indices in [0, 2)" in flat


@pytest.mark.parametrize("name", ["ricursive", "beam", "xpress", "laguna", "muse-alias"])
def test_the_serve_command_names_the_method_each_family_declares(name: str) -> None:
    # vLLM 0.34.0 takes the method from the class's declared speculator (base method "dflash" for every
    # family) and refuses a configured one that differs; 0.33.0 infers it from the path or the Muse name only
    _, doc = run_json("compat", str(FAMILIES / name), "--engine", "vllm@0.34.0", "--engine", "vllm@0.33.0")
    for e in doc["engines"]:
        if e["verdict"] in ("loads", "degraded"):
            assert json.loads(e["serve"].split("--speculative-config ")[1].strip("'"))["method"] == "dflash"


@pytest.mark.parametrize("max_window_layers,verdict", [(0, "loads"), (None, "fails")])
def test_beam_without_layer_types_is_judged_by_what_qwen3config_fills(
    tmp_path: Path, max_window_layers: int | None, verdict: str
) -> None:
    # transformers' Qwen3Config: sliding where a window is set and i >= max_window_layers (28 by default)
    d = tmp_path / "beam"
    shutil.copytree(FAMILIES / "beam", d)
    cfg = json.loads((d / "config.json").read_text())
    del cfg["layer_types"]
    cfg.pop("max_window_layers")
    if max_window_layers is not None:
        cfg["max_window_layers"] = max_window_layers
    (d / "config.json").write_text(json.dumps(cfg))
    got = _verdicts(d, "vllm@0.34.0")["vllm@0.34.0"]
    assert got[0] == verdict and (verdict == "loads" or got[1] == ["DF804"])
