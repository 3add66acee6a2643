"""Verdict rules beyond the golden table: quantized modules, GGUF, hard refusals, silent defaults."""

from __future__ import annotations

import copy

import pytest

from conftest import real_config
from dflash2_ckpt.checkpoint.layout import expected_tensors
from dflash2_ckpt.engines import Drafter, resolve
from dflash2_ckpt.engines.judge import judge
from dflash2_ckpt.engines.quant import DENSE_FOR_VLLM
from dflash2_ckpt.formats.parse import to_spec

Q27 = real_config("z-lab_Qwen3.8-27B-DFlash2")


def drafter(
    cfg: dict | None = None,
    *,
    dialect: str | None = None,
    quantized: dict | None = None,
    extra_tensors: tuple[str, ...] = (),
) -> Drafter:
    cfg = cfg if cfg is not None else Q27
    spec, errors = to_spec(cfg)
    assert spec is not None, errors
    tensors = frozenset(e.name for e in expected_tensors(spec)) | set(extra_tensors)
    return Drafter(dialect or spec.dialect, spec.version, spec, cfg, tensors, quantized or {}, "drafter")


def verdict(engine: str, d: Drafter) -> tuple[str, list[str]]:
    v = judge(resolve(engine), d)
    return v.verdict, [r.code for r in v.reasons if r.severity != "info"]


# --- quantized modules (docs/engines.md: engines and versions, quantized drafters), hand-built mappings
# as header detection reports them ---


def test_sglang_drops_a_quantized_fc_silently() -> None:
    # sglang#39087: W4A16 fc.weight_packed/_scale/_shape dropped, fc at random init, acceptance 1.00
    v = judge(resolve("sglang@0.5.19"), drafter(quantized={"fc": "w4a16"}))
    assert v.verdict == "degraded" and [r.code for r in v.reasons if r.code == "DF807"] == ["DF807"]
    assert "random init" in v.reasons[0].message and v.reasons[0].details["module"] == "fc"


def test_sglang_consumes_quantized_attention_projections() -> None:
    assert verdict("sglang", drafter(quantized={"layers.0.self_attn.q_proj": "w4a16"})) == ("loads", [])


@pytest.mark.parametrize("engine", ["vllm@0.29.0", "vllm@0.27.0"])
def test_vllm_fails_on_weight_quantized_projections(engine: str) -> None:
    # vllm#51581 (open at 0.29.0): the draft quant config never reaches packed_modules_mapping
    cfg = real_config("z-lab_Qwen3-4B-DFlash-b16") if engine.endswith("0.27.0") else Q27
    v = judge(resolve(engine), drafter(cfg, quantized={"layers.0.self_attn.q_proj": "w8a16", "fc": "fp8"}))
    assert v.verdict == "fails" and {r.code for r in v.reasons} == {"DF806"}
    assert any(
        "AttributeError: 'QKVParallelLinear' object has no attribute 'weight'" in r.message for r in v.reasons
    )


@pytest.mark.parametrize(
    "module",
    [
        "layers.3.mlp_conv.base_kernel",
        "candidate_selector.hidden_projection",
        "candidate_selector.predecessor_codebook",
        "candidate_selector.successor_codebook",
    ],
)
def test_vllm_needs_conv_base_and_selector_dense(module: str) -> None:
    # vllm==0.28.0..0.33.0 qwen3_dflash2.py: hidden_projection quant_config=None; codebooks, base_kernel bare
    assert DENSE_FOR_VLLM.search(module)
    for engine in ("vllm@0.29.0", "vllm@0.33.0"):
        assert verdict(engine, drafter(quantized={module: "nvfp4"})) == ("fails", ["DF812"])


def test_vllm_conv_kernel_projection_is_built_quant_aware_from_031() -> None:
    # 0.29-0.30 build it with quant_config=None (dense required); 0.31+ pass the draft quant config, so the
    # quantized module is consumed like the other drafter linears, which load from 0.31
    module = "layers.0.attention_conv.kernel_projection"
    v29 = judge(resolve("vllm@0.30.0"), drafter(quantized={module: "w4a16"}))
    v31 = judge(resolve("vllm@0.31.0"), drafter(quantized={module: "w4a16"}))
    assert [r.details["effect"] for r in v29.reasons if r.code in ("DF806", "DF812")] == ["dense-required"]
    assert [r.details["effect"] for r in v31.reasons if r.code in ("DF806", "DF812")] == []
    assert (
        "quant_config=None" in v29.reasons[0].details["source"]
        or "kernel_projection" in v29.reasons[0].details["source"]
    )


def test_no_quantized_modules_means_no_quant_reason() -> None:
    assert verdict("vllm", drafter(quantized={})) == ("loads", [])


def test_an_engine_without_a_quant_rule_says_so() -> None:
    v = judge(resolve("mlx-vlm"), drafter(quantized={"fc": "mlx-q4"}))
    assert v.verdict == "loads" and "not modelled" in v.reasons[0].message


def test_mxfp4_codebooks_degrade_llamacpp() -> None:
    d = drafter(dialect="gguf", quantized={"selector_predecessor": "mxfp4", "blk.0.attn_q": "q4_k"})
    assert verdict("llama.cpp", d) == ("degraded", ["DF807"])


# --- GGUF: a detection dialect of "gguf" is judged by the llama.cpp profiles ---


def test_gguf_loads_in_current_llamacpp_with_its_command() -> None:
    v = judge(resolve("llama.cpp@b10700"), drafter(dialect="gguf"))
    assert v.verdict == "loads"
    assert v.serve == "llama-server -m TARGET.gguf -md drafter --spec-type draft-dflash --spec-draft-n-max 7"
    assert any("sample_from_anchor=true" in r.message for r in v.reasons)  # logged default, info only


def test_dflash2_gguf_fails_in_old_llamacpp_with_the_quoted_error() -> None:
    v = judge(resolve("llama.cpp@b10000"), drafter(dialect="gguf"))
    assert v.verdict == "fails" and "wrong number of tensors; expected N, got M" in v.reasons[0].message


def test_gguf_is_not_read_by_the_safetensors_engines_and_converts_back() -> None:
    for engine in ("vllm", "sglang", "mlx-vlm", "z-lab"):
        assert verdict(engine, drafter(dialect="gguf")) == ("needs-conversion", [])  # DF801 is info
    v = judge(resolve("vllm"), drafter(dialect="gguf"))
    assert "--to nested" in v.reasons[0].details["command"]


def test_hf_checkpoint_for_llamacpp_needs_the_gguf_conversion() -> None:
    d = Drafter("nested", "v2", to_spec(Q27)[0], Q27, path="org/q27", target="Qwen/Qwen3.8-27B")
    v = judge(resolve("llama.cpp"), d)
    assert v.verdict == "needs-conversion"
    # convert reads --target from a local directory: a Hub target is the download that makes one
    assert (
        v.reasons[0].details["command"]
        == "dflash2-ckpt convert org/q27 --to gguf -o DRAFTER.gguf --target TARGET"
    )
    assert "hf download Qwen/Qwen3.8-27B config.json tokenizer.json" in v.reasons[0].message


# --- hard refusals ---


def test_released_dflash_mlx_has_no_dflash2() -> None:
    # dflash-mlx 0.1.0-0.1.8 on PyPI: no selector / conv anywhere in dflash_mlx/model.py
    v, codes = verdict("dflash-mlx@0.1.8", drafter())
    assert v == "unsupported" and codes == []  # DF800 is info


def test_dflash_mlx_needs_top_level_model_args_and_fills_mask_zero() -> None:
    cfg = copy.deepcopy(real_config("z-lab_Qwen3-4B-DFlash-b16"))
    assert verdict("dflash-mlx", drafter(cfg))[0] in ("loads", "degraded")
    del cfg["dflash_config"]["mask_token_id"]
    v = judge(resolve("dflash-mlx"), drafter(cfg))
    assert {r.details["key"]: r.details["engine_value"] for r in v.reasons if r.code == "DF809"} == {
        "mask_token_id": 0
    }
    cfg.pop("block_size")
    cfg["dflash_config"]["block_size"] = 16
    v, codes = verdict("dflash-mlx", drafter(cfg))
    assert v == "fails" and "DF803" in codes


def test_mlx_vlm_refuses_a_causal_dflash2_and_takes_its_nested_block_size() -> None:
    cfg = copy.deepcopy(Q27)
    assert verdict("mlx-vlm@0.7.10", drafter(cfg))[0] == "loads"
    assert verdict("mlx-vlm@0.6.15", drafter(cfg)) == ("unsupported", [])  # before DFlash2 (DF800, info)
    cfg["is_causal"] = True
    v, codes = verdict("mlx-vlm@0.7.10", drafter(cfg))
    assert (
        v == "fails"
        and "not currently supported" in judge(resolve("mlx-vlm"), drafter(cfg)).reasons[0].message
    )


def test_zlab_reference_guesses_taps_instead_of_raising() -> None:
    # dflash==0.1.0 model.py: target_layer_ids default = build_target_layer_ids(num_target_layers, layers)
    cfg = copy.deepcopy(Q27)
    d = drafter(cfg)
    cfg["dflash_config"].pop("target_layer_ids")
    v = judge(resolve("z-lab"), Drafter(d.dialect, d.version, d.spec, cfg, d.tensors))
    assert v.verdict == "loads"  # the parsed spec keeps its taps, so nothing is filled here
    spec = d.spec
    assert spec is not None
    from dflash2_ckpt.engines.sglang import guessed_taps

    assert guessed_taps(spec.with_(num_target_layers=64, num_hidden_layers=5)) == (1, 16, 31, 46, 61)


def test_speculators_refuses_a_flat_config_without_verifier() -> None:
    cfg = real_config("speculators-0.9.0_tiny-dflash2")
    del cfg["speculators_config"]["verifier"]
    v = judge(resolve("speculators"), drafter(cfg))
    assert v.verdict == "fails" and "Field required" in v.reasons[0].message


# --- silent divergence ---


def test_mlx_vlm_ignores_a_nested_block_size_and_guesses_missing_keys() -> None:
    cfg = copy.deepcopy(real_config("z-lab_Qwen3-4B-DFlash-b16"))
    cfg["dflash_config"]["block_size"] = cfg.pop("block_size")  # nested: mlx-vlm does not read it
    del cfg["dflash_config"]["mask_token_id"]
    v = judge(resolve("mlx-vlm"), drafter(cfg))
    assert v.verdict == "degraded"
    filled = {r.details["key"]: r.details["engine_value"] for r in v.reasons if r.code == "DF809"}
    assert filled == {"mask_token_id": 248070, "block_size": 16}
    [block] = [r for r in v.reasons if r.code == "DF809" and r.details["key"] == "block_size"]
    assert "finds no block_size it reads" in block.message and "Set block_size explicitly" in block.message


def test_mlx_vlm_reads_the_top_level_block_size_when_both_are_set() -> None:
    # the reported backwards advice: both keys set used to give "finds no dflash_config.block_size ... set
    # dflash_config.block_size"; mlx-vlm's DFlashConfig reads the top-level key (qwen3_dflash/config.py)
    cfg = copy.deepcopy(real_config("z-lab_Qwen3-4B-DFlash-b16"))
    cfg["dflash_config"]["block_size"] = cfg["block_size"]
    v = judge(resolve("mlx-vlm@0.7.10"), drafter(cfg))
    assert [r for r in v.reasons if r.code == "DF809"] == [] and v.verdict == "loads"
    cfg["dflash_config"]["block_size"] = cfg["block_size"] // 2  # they disagree: it runs the top-level one
    v = judge(resolve("mlx-vlm@0.7.10"), drafter(cfg))
    [f] = [r for r in v.reasons if r.code == "DF809"]
    assert f.message.startswith(
        f"mlx-vlm >=0.7.0 reads block_size = {cfg['block_size']}, not dflash_config.block_size"
    )


def test_vllm_fills_a_missing_rope_theta_with_1e6() -> None:
    cfg = copy.deepcopy(Q27)
    del cfg["rope_parameters"]
    v = judge(resolve("vllm"), drafter(cfg))
    assert v.verdict == "degraded"
    [r] = [r for r in v.reasons if r.code == "DF809"]
    assert r.details == {"key": "rope_theta", "engine_value": 1_000_000.0, "source": r.details["source"]}


def test_causal_engine_rule_degrades() -> None:
    cfg = copy.deepcopy(Q27)
    cfg["is_causal"] = None
    del cfg["is_causal"]
    cfg["dflash_config"]["causal"] = False
    cfg["layer_types"] = ["full_attention"] * 4 + ["sliding_attention"]
    # SGLang ignores dflash_config.causal: its sliding default runs layer 4 causal
    v = judge(resolve("sglang"), drafter(cfg))
    assert v.verdict == "degraded" and v.reasons[0].code == "DF808" and v.reasons[0].details["layers"] == [4]


def test_unsupported_version_of_a_dflash_drafter() -> None:
    assert verdict("vllm@0.27.0", drafter()) == ("unsupported", [])
    assert judge(resolve("vllm@0.27.0"), drafter()).reasons[0].code == "DF800"


def test_flat_v1_without_sliding_window_non_causal_is_degraded_in_vllm() -> None:
    # vLLM's speculators loader reads an absent sliding_window_non_causal as true (bidirectional); speculators
    # trained a dflash (v1) drafter with its own default false: sliding layers causal
    cfg = copy.deepcopy(real_config("speculators-0.9.0_tiny-dflash2"))
    cfg.update(speculators_model_type="dflash", architectures=["DFlashDraftModel"])
    for k in (
        "conv_kernel_size",
        "conv_group_size",
        "selector_rank",
        "selector_top_k",
        "sliding_window_non_causal",
    ):
        cfg.pop(k)
    v = judge(resolve("vllm"), drafter(cfg))
    assert v.verdict == "degraded" and v.reasons[0].code == "DF808"
    assert v.reasons[0].details["engine_causal"] == [False, False]
    assert v.reasons[0].details["intended_causal"] == [True, True]
    assert judge(resolve("speculators"), drafter(cfg)).verdict == "loads"
