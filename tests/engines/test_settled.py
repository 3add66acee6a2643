"""The reported engine differences (issue 21, item 4), each settled against the released code that
engines/released.py cites; the citations themselves are checked in test_released.py."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest

from _kit.cli import invoke_cli
from conftest import FIXTURES, real_config
from dflash2_ckpt.checkpoint.layout import expected_tensors
from dflash2_ckpt.dev.synth import materialise
from dflash2_ckpt.engines import Drafter, resolve
from dflash2_ckpt.engines import released as r
from dflash2_ckpt.engines.judge import judge
from dflash2_ckpt.formats.parse import to_spec
from dflash2_ckpt.usecases.verify import verify

Q27 = real_config("z-lab_Qwen3.8-27B-DFlash2")
Q4B = real_config("z-lab_Qwen3-4B-DFlash-b16")


def drafter(cfg: dict, quantized: dict | None = None) -> Drafter:
    spec, errors = to_spec(copy.deepcopy(cfg))
    assert spec is not None, errors
    return Drafter(
        spec.dialect,
        spec.version,
        spec,
        cfg,
        frozenset(e.name for e in expected_tensors(spec)),
        quantized or {},
        "drafter",
    )


def cited(profile_ref: str) -> set[object]:
    p = resolve(profile_ref)
    return {c for f in p.sources + p.notes for c in f.cites}


# --- SGLang and quantized attention: q/k/v take the quant config in every release read (0.5.18-0.5.23) ---


@pytest.mark.parametrize("ref", ["sglang@0.5.18", "sglang@0.5.19", "sglang@0.5.23"])
def test_sglang_loads_quantized_qkv_and_drops_only_a_quantized_fc(ref: str) -> None:
    cfg = Q4B if ref.endswith("0.5.18") else Q27
    mods = {
        "layers.0.self_attn.q_proj": "w4a16",
        "layers.0.self_attn.k_proj": "w4a16",
        "layers.0.self_attn.v_proj": "w4a16",
        "fc": "w4a16",
    }
    v = judge(resolve(ref), drafter(cfg, mods))
    assert [x.details["module"] for x in v.reasons if x.code == "DF807"] == ["fc"]
    assert r.SGLANG_FC_PLAIN in cited(ref) and r.SGLANG_IGNORE in cited(ref)
    assert (r.SGLANG_QKV_QUANT_018 if ref.endswith("0.5.18") else r.SGLANG_QKV_QUANT_ARG) in cited(ref)


# --- SGLang causality: the same rule in every release; no layer_types => bidirectional whatever is_causal says


def test_sglang_ignores_is_causal_only_when_layer_types_are_absent() -> None:
    with_types = copy.deepcopy(Q4B)
    with_types["is_causal"] = True
    no_types = copy.deepcopy(with_types)
    del no_types["layer_types"]
    for ref in ("sglang@0.5.18", "sglang@0.5.23"):
        p = resolve(ref)
        assert p.causality is not None
        assert p.causality(drafter(with_types).spec) == (True,) * 5  # type: ignore[arg-type]
        assert p.causality(drafter(no_types).spec) == (False,) * 5  # type: ignore[arg-type]
        only_dflash = copy.deepcopy(Q4B)
        only_dflash["dflash_config"]["causal"] = True  # never read by SGLang
        assert p.causality(drafter(only_dflash).spec) == (False,) * 5  # type: ignore[arg-type]
        assert {r.SGLANG_NO_LAYER_TYPES, r.SGLANG_NO_DFLASH_CAUSAL} <= cited(ref)


# --- the z-lab reference is the released dflash 0.1.0, which guesses taps -----------------------------


def test_zlab_reference_cites_the_released_package_not_a_lost_commit() -> None:
    p = resolve("z-lab")
    text = " ".join(f.source for f in p.sources)
    assert "10129599" not in text and "dflash==0.1.0" in text
    assert r.ZLAB_TAPS in cited("z-lab") and not p.requires
    assert [d.key for d in p.defaults] == ["target_layer_ids", "block_size"]


# --- vLLM: use_swa, mixed layers on the V1 runner, the V2-runner note for DFlash2 only -------------------


def _nested_v1(**changes: object) -> dict:
    cfg = copy.deepcopy(Q4B)
    cfg.update(changes)
    return cfg


@pytest.mark.parametrize("ref", ["vllm@0.29.0", "vllm@0.33.0"])
def test_vllm_use_swa_needs_a_window_and_is_reported(ref: str) -> None:
    cfg = _nested_v1()
    cfg["dflash_config"]["use_swa"] = True
    v = judge(resolve(ref), drafter(cfg))
    assert v.verdict == "fails" and any("requires a window size" in x.message for x in v.reasons)
    cfg["dflash_config"]["swa_window_size"] = 1024
    v = judge(resolve(ref), drafter(cfg))
    assert v.verdict == "loads" and any(
        "use_swa makes vLLM run every layer with a sliding window" in x.message for x in v.reasons
    )


def test_vllm_mixed_layers_name_the_v2_runner_and_the_v2_note_is_for_dflash2_only() -> None:
    mixed = _nested_v1(
        layer_types=["sliding_attention", "full_attention"] * 2 + ["full_attention"], sliding_window=2048
    )
    v = judge(resolve("vllm@0.33.0"), drafter(mixed))
    assert any("V1 runner loading raises NotImplementedError" in x.message for x in v.reasons)
    v1 = judge(resolve("vllm@0.33.0"), drafter(Q4B))
    v2 = judge(resolve("vllm@0.33.0"), drafter(Q27))
    assert not any("V2 model runner" in x.message for x in v1.reasons)
    assert any("needs the V2 model runner" in x.message for x in v2.reasons)
    assert r.VLLM_V1_RUNNER in cited("vllm@0.33.0")


# --- DF207: vLLM uses a shipped embed_tokens copy ------------------------------------------------------------


def test_df207_says_vllm_drafts_with_a_shipped_embed_tokens(tmp_path: Path) -> None:
    from dflash2_ckpt.checkpoint import open_checkpoint

    ckpt = open_checkpoint(FIXTURES / "good" / "nested-v2")
    assert ckpt.config is not None
    cfg = dict(ckpt.config)
    tensors = [(t.name, t.dtype, t.shape) for t in ckpt.tensors.values()]
    tensors.append(("embed_tokens.weight", "F32", (cfg["vocab_size"], cfg["hidden_size"])))
    [f] = [x for x in verify(materialise(tmp_path, cfg, tensors)).findings if x.code == "DF207"]
    assert (
        "vLLM loads a shipped copy and drafts with it" in f.message
        and "includes_embed_tokens" in f.details["source"]
    )


# --- quantized drafters by release ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "ref,effects",
    [
        ("vllm@0.29.0", ["dense-required"]),
        ("vllm@0.30.0", ["dense-required"]),
        ("vllm@0.31.0", []),
        ("vllm@0.33.0", []),
    ],
)
def test_vllm_conv_projection_quantization_by_release(ref: str, effects: list[str]) -> None:
    # from 0.31 it is built with the draft quant config and loads like the other projections
    v = judge(resolve(ref), drafter(Q27, {"layers.0.mlp_conv.kernel_projection": "w4a16"}))
    assert [x.details["effect"] for x in v.reasons if "effect" in x.details] == effects


@pytest.mark.parametrize("ref", ["vllm@0.27.1", "vllm@0.29.0", "vllm@0.30.0"])
def test_vllm_weight_quantized_projections_fail_before_031(ref: str) -> None:
    cfg = Q4B if ref.endswith("0.27.1") else Q27
    v = judge(resolve(ref), drafter(cfg, {"layers.0.self_attn.q_proj": "w4a16"}))
    assert v.verdict == "fails" and "packed_modules_mapping" in v.reasons[0].message
    if not ref.endswith("0.27.1"):
        assert r.VLLM_DRAFT_QUANT_NO_PACKED in cited(ref) and r.VLLM_QUANT_KV_ABSENT in cited(ref)


@pytest.mark.parametrize("ref", ["vllm@0.31.0", "vllm@0.32.0", "vllm@0.33.0"])
def test_vllm_weight_quantized_projections_load_from_031(ref: str) -> None:
    # vLLM 0.32.0's own loader takes the FP8 and W4A16 fixtures (fixtures/vllm/golden.json): the context-KV
    # precompute runs a quantized qkv_proj through its quant method instead of reading its .weight
    v = judge(resolve(ref), drafter(Q27, {"layers.0.self_attn.q_proj": "w4a16", "fc": "fp8"}))
    assert "DF806" not in {x.code for x in v.reasons}
    assert r.VLLM_QUANT_KV in cited(ref)


# --- transformers: DFlash v1 in the assistant dialect only -------------------------------------------------


def test_compat_with_transformers_loads_an_assistant_export_and_refuses_dflash2() -> None:

    from dflash2_ckpt.cli import main

    ok = invoke_cli(
        main,
        [
            "compat",
            str(FIXTURES / "pairs" / "tiny" / "drafter-v1"),
            "--engine",
            "transformers",
            "--format",
            "json",
        ],
    )
    assert ok.exit_code == 0, ok.output
    import json

    [e] = json.loads(ok.output)["engines"]
    assert e["verdict"] == "loads" and any("block_size - 1" in x["message"] for x in e["reasons"])
    # a null sliding_window (as Qwen3-derived configs write it) fails transformers' strict config class
    null = invoke_cli(
        main,
        [
            "compat",
            str(FIXTURES / "good" / "assistant-v1"),
            "--engine",
            "transformers@5.15.0",
            "--format",
            "json",
        ],
    )
    assert null.exit_code == 1
    [e] = json.loads(null.output)["engines"]
    assert e["verdict"] == "fails" and "sliding_window is None" in e["reasons"][0]["message"]
    assert str(r.TF_SLIDING_INT) in e["reasons"][0]["message"]
    v2 = invoke_cli(
        main,
        [
            "compat",
            str(FIXTURES / "good" / "nested-v2"),
            "--engine",
            "transformers@5.24.0",
            "--format",
            "json",
        ],
    )
    assert v2.exit_code == 1
    [e] = json.loads(v2.output)["engines"]
    assert e["verdict"] == "unsupported" and "only DFlash v1" in e["reasons"][0]["message"]
    assert r.TF_NO_SELECTOR in cited("transformers")
