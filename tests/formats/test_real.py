"""Ground truth: the published configs and tensor lists in fixtures/real (copied from the releases)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import REAL, real_config
from dflash2_ckpt.checkpoint.layout import expected_tensors
from dflash2_ckpt.dev.synth import materialise, read_tensor_list
from dflash2_ckpt.formats.parse import to_spec
from dflash2_ckpt.usecases.verify import verify

Q27 = "z-lab_Qwen3.8-27B-DFlash2"


@pytest.fixture(scope="module")
def q27(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("q27")
    return materialise(d, real_config(Q27), read_tensor_list(REAL / f"{Q27}.tensors.tsv"))


def test_q27_sparse_file_has_the_published_size(q27: Path) -> None:
    assert (q27 / "model.safetensors").stat().st_size == 3_848_817_896


def test_q27_byte_accounting_matches_the_header(q27: Path) -> None:
    r = verify(q27)
    by = r.summary["bytes_by_component"]
    assert (by["trunk"], by["conv"], by["selector"], by["extras"]) == (
        3_460_426_240,
        131_481_600,
        256_901_120,
        0,
    )
    assert r.summary["tensor_count"] == 81
    assert r.bytes_read < 64 * 1024


def test_q27_passes_strict_with_no_finding(q27: Path) -> None:
    # a DFlash2 checkpoint is judged by the engines that can load it, never by vLLM's pre-DFlash2 rule
    r = verify(q27)
    assert r.findings == () and not r.failed(strict=True)


def test_q27_against_pre_dflash2_vllm_warns_every_layer_causal(q27: Path) -> None:
    [f] = verify(q27, engines=["vllm@0.27.0"]).findings
    assert f.code == "DF401" and f.severity == "warning" and f.details["engine"] == "vllm>=0.26,<0.28"
    assert f.details["engine_causal"] == [True] * 5 and f.details["intended_causal"] == [False] * 5
    assert "every layer causal" in f.message and "dflash_config.causal: false" in f.message


def test_q27_expected_layout_equals_the_published_list() -> None:
    spec, errors = to_spec(real_config(Q27))
    assert not errors
    published = {(n, s) for n, _, s in read_tensor_list(REAL / f"{Q27}.tensors.tsv")}
    assert {(e.name, e.shape) for e in expected_tensors(spec)} == published


def test_speculators_save_passes_as_is(tmp_path: Path) -> None:
    name = "speculators-0.9.0_tiny-dflash2"
    d = materialise(tmp_path, real_config(name), read_tensor_list(REAL / f"{name}.tensors.tsv"))
    r = verify(d)
    assert not r.failed(strict=True), r.findings
    assert r.summary["dialect"] == "flat" and r.summary["version"] == "v2"
    assert r.summary["geometry"]["target_layer_ids"] == [0, 2, 4]  # aux ids minus one


@pytest.mark.parametrize(
    "name,version", [("z-lab_Muse-Glimmer-30B-DFlash2", "v2"), ("z-lab_Qwen3-4B-DFlash-b16", "v1")]
)
def test_published_configs_pass_with_their_implied_layout(tmp_path: Path, name: str, version: str) -> None:
    cfg = real_config(name)
    spec, errors = to_spec(cfg)
    assert not errors and spec.version == version
    d = materialise(tmp_path, cfg, [(e.name, "BF16", e.shape) for e in expected_tensors(spec)])
    r = verify(d)
    assert not r.failed(), r.findings


def test_muse_glimmer_scales_are_read() -> None:
    spec, _ = to_spec(real_config("z-lab_Muse-Glimmer-30B-DFlash2"))
    assert spec.output_multiplier == pytest.approx(0.19611613513818404)
    assert spec.final_logit_softcapping == 20.0 and spec.block_size == 16


def test_qwen3_4b_old_dialect_reads_top_level_block_size_and_rope() -> None:
    spec, _ = to_spec(real_config("z-lab_Qwen3-4B-DFlash-b16"))
    assert spec.block_size == 16 and spec.rope_theta == 1_000_000 and spec.version == "v1"


def test_dspark_is_named_not_accepted(tmp_path: Path) -> None:
    d = materialise(
        tmp_path, real_config("deepseek-ai_dspark_qwen3_8b_block7"), [("fc.weight", "BF16", (4, 4))]
    )
    r = verify(d)
    codes = [f.code for f in r.findings]
    assert codes == ["DF304"]
    assert "DSpark" in r.findings[0].message
    assert r.summary["other_drafter"] == "DSpark"


def test_real_files_are_the_published_bytes() -> None:
    import hashlib

    digest = hashlib.sha256((REAL / f"{Q27}.config.json").read_bytes()).hexdigest()
    assert digest.startswith("873e3556") and digest.endswith("e980")
    assert json.loads((REAL / f"{Q27}.config.json").read_text())["is_causal"] is False
