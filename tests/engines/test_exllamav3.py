"""exllamav3 1.6.5, and the engines known from their released wheels (mlx-dspark 0.20.3, lmdeploy 0.18.0,
mistralrs 0.9.5), as a user meets them: compat and verify on the fixtures, the tap-shift fix, the meaning
check. Each expectation follows the engine's released code (engines/released_exl.py cites it)."""

from __future__ import annotations

import dataclasses
import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from _kit.cli import run, run_json
from conftest import FIXTURES
from dflash2_ckpt.checkpoint import open_checkpoint
from dflash2_ckpt.convert import convert
from dflash2_ckpt.engines import exllamav3, released
from dflash2_ckpt.engines.judge import judge
from dflash2_ckpt.engines.meaning import built, compare
from dflash2_ckpt.engines.registry import resolve
from dflash2_ckpt.usecases.compat import drafter_of

GOOD = FIXTURES / "good"


def _copy(name: str, tmp: Path, edit: Callable[[dict[str, Any]], object] | None = None) -> Path:
    d = tmp / name
    shutil.copytree(GOOD / name, d)
    if edit is not None:
        cfg = json.loads((d / "config.json").read_text())
        edit(cfg)
        (d / "config.json").write_text(json.dumps(cfg, indent=2))
    return d


def _verdict(path: Path, engine: str, *extra: str) -> dict[str, Any]:
    _, doc = run_json("compat", str(path), "--engine", engine, *extra)
    [e] = doc["engines"]
    return e


def _codes(e: dict[str, Any]) -> list[str]:
    return [r["code"] for r in e["reasons"]]


def _findings(path: Path, *extra: str) -> list[dict[str, Any]]:
    _, report = run_json("verify", str(path), *extra)
    return list(report["findings"])


def test_a_v1_drafter_is_tapped_one_layer_deeper_than_vllm_taps_it() -> None:
    e = _verdict(GOOD / "nested-v1", "exllamav3")
    assert e["verdict"] == "degraded"
    [taps] = [r for r in e["reasons"] if r["code"] == "DF840"]
    assert "target layers [1, 3]" in taps["message"] and "tap [0, 2]" in taps["message"]
    assert "dflash_config.tap_shift: 0" in taps["message"]
    assert _verdict(GOOD / "nested-v1", "vllm")["verdict"] == "loads"
    # DFlash2 and the assistant export are tapped as written (their config classes declare tap_shift = 0)
    assert "DF840" not in _codes(_verdict(GOOD / "nested-v2", "exllamav3"))
    assistant = _verdict(
        GOOD / "assistant-v1", "exllamav3", "--target", str(FIXTURES / "targets" / "tiny-target")
    )
    assert "DF840" not in _codes(assistant) and assistant["verdict"] == "loads"


def test_verify_names_the_tap_difference_for_exllamav3_and_the_unsafe_fix_pins_it(tmp_path: Path) -> None:
    d = _copy("nested-v1", tmp_path)
    assert "DF404" not in {f["code"] for f in _findings(d)}  # only where exllamav3 is named
    [f] = [f for f in _findings(d, "--engine", "exllamav3") if f["code"] == "DF404"]
    assert f["severity"] == "warning" and f["fix"]["applicability"] == "unsafe"
    assert (f["details"]["exllamav3_taps"], f["details"]["vllm_taps"]) == ([1, 3], [0, 2])
    run("verify", str(d), "--engine", "exllamav3", "--fix")  # safe fixes only: the pin is not one
    assert "tap_shift" not in json.loads((d / "config.json").read_text())["dflash_config"]
    code, _, err = run("verify", str(d), "--engine", "exllamav3", "--fix", "--unsafe-fixes")
    assert code == 0 and "tap_shift: 0" in err
    assert json.loads((d / "config.json").read_text())["dflash_config"]["tap_shift"] == 0
    after = _findings(d, "--engine", "exllamav3")
    assert "DF404" not in {f["code"] for f in after}
    [read] = [f for f in after if f["field"] == "dflash_config.tap_shift"]
    assert (
        read["code"] == "DF121"
        and "exllamav3" in read["message"]
        and "DF116" not in {f["code"] for f in after}
    )
    assert _verdict(d, "exllamav3")["verdict"] == "loads"
    # the meaning check proves it: exllamav3 now taps what vLLM taps, and that is a repair, not a change
    src, out = drafter_of(open_checkpoint(GOOD / "nested-v1")), drafter_of(open_checkpoint(d))
    exl, vllm = resolve("exllamav3"), resolve("vllm")
    assert built(exl, src)["taps"] == [1, 3]
    assert built(exl, out)["taps"] == built(vllm, out)["taps"] == [0, 2]
    rows = {r.engine: r for r in compare(src, out, (exl, vllm)).rows}
    assert [(c.field, c.kind) for c in rows[exl.id].changes] == [("taps", "repaired")]
    assert rows[vllm.id].changes == ()


def test_a_pinned_shift_is_read_from_dflash_config_before_the_top_level() -> None:
    cfg = {"architectures": ["DFlashDraftModel"], "tap_shift": 2, "dflash_config": {"tap_shift": 0}}
    assert exllamav3.TAPS_OFFSET.of("v1", cfg) == 0
    assert exllamav3.TAPS_OFFSET.of("v1", {**cfg, "dflash_config": {}}) == 2
    assert exllamav3.TAPS_OFFSET.of("v2", {"architectures": ["DFlash2DraftModel"], "tap_shift": 1}) == 1
    assert exllamav3.TAPS_OFFSET.of("v1", {"architectures": ["MuseGlimmerAssistantModel"]}) == 0


def _causal_keys(cfg: dict[str, Any]) -> None:
    """exllamav3 reads dflash_config.is_causal; vLLM reads dflash_config.causal (and no other engine either)."""
    cfg.pop("is_causal")
    cfg["dflash_config"].update(is_causal=True, causal=False)


def test_dflash_config_is_causal_makes_exllamav3_alone_run_causal(tmp_path: Path) -> None:
    d = _copy("nested-v1", tmp_path, _causal_keys)  # full layers: the others run them bidirectional
    found = _findings(d)
    engines = {f["details"]["engine"] for f in found if f["code"] == "DF401"}
    assert "exllamav3>=1.6.5" in engines and not any(e.startswith(("vllm", "sglang")) for e in engines)
    [read] = [f for f in found if f["field"] == "dflash_config.is_causal"]
    assert read["code"] == "DF121" and "exllamav3" in read["message"] and "Checked here" in read["message"]
    e = _verdict(d, "exllamav3")
    assert e["verdict"] == "degraded" and "DF808" in _codes(e)
    assert _verdict(d, "vllm")["verdict"] == "loads"


def test_dflash_config_causal_is_not_read_by_exllamav3(tmp_path: Path) -> None:
    def edit(cfg: dict[str, Any]) -> None:
        cfg.pop("is_causal")  # dflash_config.causal: false stays, the layers are sliding

    d = _copy("nested-v2", tmp_path, edit)
    [f] = [f for f in _findings(d) if f["code"] == "DF401" and f["details"]["engine"] == "exllamav3>=1.6.5"]
    assert f["details"]["engine_causal"] == [True, True] and f["details"]["intended_causal"] == [False, False]
    assert _verdict(d, "vllm")["verdict"] == "loads"  # vLLM reads dflash_config.causal


def test_a_flat_config_needs_conversion_for_exllamav3() -> None:
    e = _verdict(GOOD / "flat-v1", "exllamav3")
    assert e["verdict"] == "needs-conversion" and _codes(e) == ["DF801"]


def test_converting_the_assistant_export_keeps_exllamav3_s_taps(tmp_path: Path) -> None:
    out = tmp_path / "nested"
    convert(GOOD / "assistant-v1", out, to="nested", target=FIXTURES / "targets" / "tiny-target")
    assert json.loads((out / "config.json").read_text())["dflash_config"]["tap_shift"] == 0
    src, dst = drafter_of(open_checkpoint(GOOD / "assistant-v1")), drafter_of(open_checkpoint(out))
    exl = resolve("exllamav3")
    assert built(exl, src)["taps"] == built(exl, dst)["taps"] == [0, 2]


def _with_sinks(cfg: dict[str, Any]) -> None:
    cfg["dflash_config"]["attention_sink_bias"] = True


@pytest.mark.parametrize("name,ignored", [("nested-v2", True), ("nested-v1", False)])
def test_only_the_dflash2_model_drops_attention_sinks(tmp_path: Path, name: str, ignored: bool) -> None:
    d = drafter_of(open_checkpoint(_copy(name, tmp_path, _with_sinks)))
    v = judge(resolve("exllamav3"), d)
    assert ("DF815" in [r.code for r in v.reasons]) is ignored


@pytest.mark.parametrize("scheme,fails", [("w4a16", True), ("w8a16", True), ("fp8", False)])
def test_quantized_modules_load_only_as_exl3_or_dense(scheme: str, fails: bool) -> None:
    e = _verdict(FIXTURES / "quantized" / scheme, "exllamav3")
    assert ("DF806" in _codes(e)) is fails
    if fails:
        assert e["verdict"] == "fails"


def test_compiled_mistralrs_is_unverified_never_loads() -> None:
    code, doc = run_json("compat", str(GOOD / "nested-v2"), "--engine", "mistralrs")
    [e] = doc["engines"]
    assert (e["verdict"], _codes(e)) == ("unverified", ["DF841"]) and e["serve"] is None
    assert code == 1  # a named engine that is not known to load it
    code, out, _ = run("compat", str(GOOD / "nested-v1"), "--engine", "mistralrs")
    assert "unverified" in out and "compiled" in out


def test_lmdeploy_loads_dflash_v1_only_and_ignores_is_causal(tmp_path: Path) -> None:
    assert _verdict(GOOD / "nested-v1", "lmdeploy")["verdict"] == "loads"
    assert _verdict(GOOD / "nested-v2", "lmdeploy")["verdict"] == "unsupported"

    def causal_by_is_causal(cfg: dict[str, Any]) -> None:
        cfg["is_causal"] = True
        cfg["dflash_config"].pop("causal")

    e = _verdict(_copy("nested-v1", tmp_path, causal_by_is_causal), "lmdeploy")
    assert e["verdict"] == "degraded" and "DF808" in _codes(e)


def test_mlx_dspark_refuses_names_its_model_does_not_have() -> None:
    d = drafter_of(open_checkpoint(GOOD / "nested-v1"))
    assert judge(resolve("mlx-dspark"), d).verdict == "loads"
    extra = dataclasses.replace(d, tensors=d.tensors | {"embed_tokens.weight"})
    v = judge(resolve("mlx-dspark"), extra)
    assert v.verdict == "fails" and "embed_tokens.weight" in v.reasons[0].message


def test_the_new_engines_are_cited_and_their_wheels_required() -> None:
    reqs = released.requirements()
    assert {"exllamav3==1.6.5", "mlx-dspark==0.20.3", "lmdeploy==0.18.0", "mistralrs==0.9.5"} <= set(reqs)
    mask = exllamav3.TENSOR_READERS["mask_embedding"]
    assert mask.cites and all(c in released.all_cites() for c in mask.cites)
    assert any(c.anchor.startswith('self.key_mask_embedding = "mask_embedding"') for c in mask.cites)


def test_laguna_is_causal_by_default_and_its_asserts_are_refusals() -> None:
    d = drafter_of(open_checkpoint(GOOD / "nested-v1"))
    assert d.spec is not None
    spec = dataclasses.replace(d.spec, transformer_extra={**d.spec.transformer_extra, "model_type": "laguna"})
    no_key = dataclasses.replace(spec, causality=dataclasses.replace(spec.causality, dflash_causal=None))
    assert exllamav3.causality(no_key) == (True, True)  # dflash_config.causal defaults to true
    assert exllamav3.causality(spec) == (False, False)  # the fixture's dflash_config.causal: false
    assert exllamav3.causality(d.spec) == (False, False)  # a DFlashDraftModel reads is_causal
    cfg = {
        **d.config,
        "architectures": ["DFlashLagunaForCausalLM"],
        "gating": "per-head",
        "layer_types": ["sliding_attention", "full_attention"],
        "draft_vocab_size": 32,
    }
    laguna = dataclasses.replace(d, config=cfg, spec=spec)
    v = judge(resolve("exllamav3"), laguna)
    [why] = [r.message for r in v.reasons if r.code == "DF804"]
    assert v.verdict == "fails" and "not uniform" in why and "draft_vocab_size 32 differs" in why
    assert exllamav3.tap_shift(laguna) == 0  # Laguna taps the ids raw


def test_a_newer_exllamav3_is_judged_as_the_release_checked() -> None:
    e = _verdict(GOOD / "nested-v2", "exllamav3@1.7.0")
    assert "DF816" in _codes(e) and e["checked_through"] == "1.6.5"
    code, _, err = run("compat", str(GOOD / "nested-v2"), "--engine", "exllamav3@1.6.0")
    assert code == 2 and "no exllamav3 profile covers 1.6.0" in err  # no release before it was read
