"""Quantized drafters at header level: fixtures made by compressed-tensors, the 27B layouts, and ModelOpt /
MLX checkpoints written here from the layouts in docs/engines.md, quantized drafters (shapes spelled out,
not derived by the code)."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from conftest import FIXTURES, ROOT
from dflash2_ckpt.checkpoint import open_checkpoint
from dflash2_ckpt.checkpoint.quant import quantized_modules
from dflash2_ckpt.dev.synth import materialise, read_tensor_list
from dflash2_ckpt.usecases.verify import inspect, verify

Q = FIXTURES / "quantized"
BASE = json.loads((FIXTURES / "good" / "nested-v2" / "config.json").read_text())
LAYOUT = {n: (t.dtype, t.shape) for n, t in open_checkpoint(FIXTURES / "good" / "nested-v2").tensors.items()}
LINEARS = [
    n[:-7]
    for n, (_, s) in LAYOUT.items()
    if n.endswith(".weight")
    and len(s) == 2
    and "kernel_projection" not in n
    and "candidate_selector" not in n
]


def codes(report: Any, severities: tuple[str, ...] = ("error", "warning")) -> list[str]:
    return sorted(f.code for f in report.findings if f.severity in severities)


@pytest.mark.parametrize(
    "scheme,label", [("w4a16", "w4a16"), ("w8a16", "w8a16"), ("fp8", "fp8"), ("nvfp4", "nvfp4")]
)
def test_compressed_tensors_fixtures_verify_clean_with_scheme_per_module(scheme: str, label: str) -> None:
    r = verify(Q / scheme)
    assert codes(r) == []
    assert [f.code for f in r.findings] == ["DF220"]
    mods = quantized_modules(open_checkpoint(Q / scheme))
    assert mods == {m: label for m in LINEARS}


def test_inspect_reports_stored_and_logical_bytes() -> None:
    q = inspect(Q / "w4a16").summary["quantization"]
    assert q["library"] == "compressed-tensors"
    assert q["stored_bytes"] == sum(t.nbytes for t in open_checkpoint(Q / "w4a16").tensors.values())
    elements = 0
    for _, (_, s) in LAYOUT.items():
        n = 1
        for d in s:
            n *= d
        elements += n
    assert q["logical_bytes"] == 2 * elements  # every logical element at bf16's 2 bytes
    assert q["compression_ratio"] == round(q["logical_bytes"] / q["stored_bytes"], 4)
    assert q["stored_bytes_by_component"]["conv"] == q["logical_bytes_by_component"]["conv"] * 2  # F32, dense


def _materialise_tsv(tmp: Path, stem: str) -> Path:
    d = tmp / stem
    materialise(
        d, json.loads((Q / f"{stem}.config.json").read_text()), read_tensor_list(Q / f"{stem}.tensors.tsv")
    )
    return d


@pytest.mark.parametrize("scheme", ["w4a16", "w8a16", "fp8", "nvfp4"])
def test_real_27b_layouts_verify_on_logical_shapes(tmp_path: Path, scheme: str) -> None:
    d = _materialise_tsv(tmp_path, f"qwen3.8-27b-{scheme}")
    r = verify(d)
    dense = materialise(
        tmp_path / "dense",
        json.loads((FIXTURES / "real" / "z-lab_Qwen3.8-27B-DFlash2.config.json").read_text()),
        read_tensor_list(FIXTURES / "real" / "z-lab_Qwen3.8-27B-DFlash2.tensors.tsv"),
    )
    assert codes(r) == codes(verify(dense)), [f.message for f in r.findings]  # the dense one's DF401 only
    ckpt = open_checkpoint(d)
    real = {n: s for n, _, s in read_tensor_list(FIXTURES / "real" / "z-lab_Qwen3.8-27B-DFlash2.tensors.tsv")}
    from dflash2_ckpt.checkpoint.quant import build_view

    view = build_view(ckpt)
    assert {n: t.shape for n, t in view.logical.items()} == real
    assert r.bytes_read < 200_000  # headers and config only


def _tiny(
    tmp: Path,
    name: str,
    config: dict[str, Any],
    linear: Callable[[str, tuple[int, ...]], list],
    extra_files: dict[str, Any] | None = None,
    skip: frozenset[str] = frozenset(),
) -> Path:
    tensors = []
    for n, (dt, s) in LAYOUT.items():
        mod = n[:-7]
        if mod in LINEARS and mod not in skip:
            tensors += linear(mod, s)
        else:
            tensors.append((n, dt, s))
    d = materialise(tmp / name, config, tensors)
    for fname, obj in (extra_files or {}).items():
        (d / fname).write_text(json.dumps(obj))
    return d


def modelopt_fp8(mod: str, s: tuple[int, ...]) -> list:
    return [
        (f"{mod}.weight", "F8_E4M3", s),
        (f"{mod}.weight_scale", "F32", ()),
        (f"{mod}.input_scale", "F32", ()),
    ]


def modelopt_nvfp4(mod: str, s: tuple[int, ...]) -> list:
    return [
        (f"{mod}.weight", "U8", (s[0], s[1] // 2)),
        (f"{mod}.weight_scale", "F8_E4M3", (s[0], s[1] // 16)),
        (f"{mod}.weight_scale_2", "F32", ()),
        (f"{mod}.input_scale", "F32", ()),
    ]


def mlx_q4(
    mod: str, s: tuple[int, ...]
) -> list:  # group 32: [out, in*4/32] u32, [out, in/32] scales + biases
    return [
        (f"{mod}.weight", "U32", (s[0], s[1] // 8)),
        (f"{mod}.scales", "F16", (s[0], s[1] // 32)),
        (f"{mod}.biases", "F16", (s[0], s[1] // 32)),
    ]


EXCLUDE = ["*kernel_projection*", "candidate_selector*", "lm_head"]


def test_modelopt_fp8_in_config(tmp_path: Path) -> None:
    cfg = {
        **BASE,
        "quantization_config": {"quant_method": "modelopt", "quant_algo": "FP8", "exclude_modules": EXCLUDE},
    }
    d = _tiny(tmp_path, "mo-fp8", cfg, modelopt_fp8)
    assert codes(verify(d)) == []
    assert set(quantized_modules(open_checkpoint(d)).values()) == {"fp8"}


def test_modelopt_nvfp4_in_hf_quant_config(tmp_path: Path) -> None:
    hf = {
        "producer": {"name": "modelopt", "version": "0.40"},
        "quantization": {"quant_algo": "NVFP4", "group_size": 16, "exclude_modules": EXCLUDE},
    }
    d = _tiny(tmp_path, "mo-nvfp4", BASE, modelopt_nvfp4, {"hf_quant_config.json": hf})
    assert codes(verify(d)) == []
    assert quantized_modules(open_checkpoint(d)) == {m: "nvfp4" for m in LINEARS}


def test_modelopt_exclude_glob_that_matches_nothing(tmp_path: Path) -> None:
    cfg = {
        **BASE,
        "quantization_config": {
            "quant_method": "modelopt",
            "quant_algo": "FP8",
            "exclude_modules": ["*kernel_projections", "candidate_selector*"],
        },
    }
    r = verify(_tiny(tmp_path, "mo-typo", cfg, modelopt_fp8))
    f = next(f for f in r.findings if f.code == "DF226")
    assert f.severity == "error" and "layers.0.attention_conv.kernel_projection" in f.details["modules"]


def test_mlx_affine_with_per_module_override(tmp_path: Path) -> None:
    cfg = {**BASE, "quantization": {"group_size": 32, "bits": 4, "fc": {"group_size": 32, "bits": 8}}}

    def lin(mod: str, s: tuple[int, ...]) -> list:
        if mod == "fc":
            return [
                (f"{mod}.weight", "U32", (s[0], s[1] // 4)),
                (f"{mod}.scales", "F16", (s[0], s[1] // 32)),
                (f"{mod}.biases", "F16", (s[0], s[1] // 32)),
            ]
        return mlx_q4(mod, s)

    d = _tiny(tmp_path, "mlx", cfg, lin)
    assert codes(verify(d)) == []
    mods = quantized_modules(open_checkpoint(d))
    assert mods["fc"] == "mlx-q8" and mods["layers.0.mlp.up_proj"] == "mlx-q4"


def test_mlx_module_marked_dense_but_stored_quantized(tmp_path: Path) -> None:
    cfg = {**BASE, "quantization": {"group_size": 32, "bits": 4, "layers.0.mlp.up_proj": False}}
    assert "DF224" in codes(verify(_tiny(tmp_path, "mlx-false", cfg, mlx_q4)))


def test_wrong_scale_shape_is_inconsistent(tmp_path: Path) -> None:
    def bad(mod: str, s: tuple[int, ...]) -> list:
        out = mlx_q4(mod, s)
        return [
            (n, d, (s[0], 3)) if n.endswith(".scales") and mod == "fc" else (n, d, sh) for n, d, sh in out
        ]

    cfg = {**BASE, "quantization": {"group_size": 32, "bits": 4}}
    r = verify(_tiny(tmp_path, "mlx-bad", cfg, bad))
    assert codes(r) == ["DF223"] and r.findings[0].tensor == "fc.scales"


def _ct_config(**over: Any) -> dict[str, Any]:
    q = json.loads((Q / "w4a16" / "config.json").read_text())["quantization_config"]
    q.update(over)
    return {**BASE, "quantization_config": q}


def test_dense_by_config_stored_quantized(tmp_path: Path) -> None:
    src = json.loads((Q / "w4a16" / "config.json").read_text())
    cfg = copy.deepcopy(src)
    cfg["quantization_config"]["ignore"] = src["quantization_config"]["ignore"] + ["fc"]
    d = tmp_path / "ct"
    d.mkdir()
    (d / "config.json").write_text(json.dumps(cfg))
    (d / "model.safetensors").write_bytes((Q / "w4a16" / "model.safetensors").read_bytes())
    r = verify(d)
    assert codes(r) == ["DF224"] and r.findings[0].details["ignored_by"] == "fc"


def test_quantized_by_config_stored_dense(tmp_path: Path) -> None:
    # the W4A16 config over the dense fixture: every linear should be packed
    d = tmp_path / "ct-dense"
    d.mkdir()
    (d / "config.json").write_text(json.dumps(_ct_config()))
    (d / "model.safetensors").write_bytes(
        (FIXTURES / "good" / "nested-v2" / "model.safetensors").read_bytes()
    )
    r = verify(d)
    assert set(codes(r)) == {"DF225"} and len(r.findings) == len(LINEARS)


@pytest.mark.parametrize(
    "q,code",
    [
        ({"quant_method": "gptq", "bits": 4}, "DF228"),
        ({"quant_method": "compressed-tensors", "config_groups": {}}, "DF229"),
        (
            {
                "quant_method": "compressed-tensors",
                "format": "pack-quantized",
                "ignore": ["re:(unclosed"],
                "config_groups": {"g": {"targets": ["Linear"], "weights": {"num_bits": 4}}},
            },
            "DF229",
        ),
    ],
)
def test_unmodelled_or_malformed_configs(tmp_path: Path, q: dict[str, Any], code: str) -> None:
    d = tmp_path / "c"
    d.mkdir()
    (d / "config.json").write_text(json.dumps({**BASE, "quantization_config": q}))
    (d / "model.safetensors").write_bytes((Q / "w4a16" / "model.safetensors").read_bytes())
    assert code in codes(verify(d))


def test_fp8_storage_is_not_a_dtype_error_and_quantization_config_is_not_unknown() -> None:
    r = verify(Q / "fp8")
    assert not {"DF204", "DF202", "DF116", "DF209"} & {f.code for f in r.findings}


def test_header_level_verify_of_a_quantized_drafter_never_imports_torch() -> None:
    code = (
        "import sys; from dflash2_ckpt.usecases.verify import verify, inspect; "
        f"verify({str(Q / 'nvfp4')!r}); inspect({str(Q / 'w4a16')!r}); "
        "from dflash2_ckpt.cli import main; "
        "assert 'torch' not in sys.modules and 'compressed_tensors' not in sys.modules, 'imported'"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT)


def test_engine_profiles_judge_the_header_detected_schemes() -> None:
    """The per-engine verdicts come from quantized_modules: SGLang drops a W4A16 fc silently, vLLM before 0.31
    cannot build weight-quantized drafter projections before 0.31; a dense drafter gets neither."""
    from dflash2_ckpt.usecases.compat import compat

    quant = {(v.profile.engine, v.profile.versions.label): v for v in compat(Q / "w4a16").verdicts}
    dense = {
        (v.profile.engine, v.profile.versions.label): v
        for v in compat(FIXTURES / "good" / "nested-v2").verdicts
    }
    sglang = [k for k in quant if k[0] == "sglang"][-1]  # the newest release (profiles oldest first)
    assert quant[sglang].verdict == "degraded" and "DF807" in {r.code for r in quant[sglang].reasons}
    assert "DF807" not in {r.code for r in dense[sglang].reasons}
    vllm = [k for k in quant if k[0] == "vllm" and quant[k].verdict != "unsupported"]
    assert any("DF806" in {r.code for r in quant[k].reasons} for k in vllm)
    assert not any("DF806" in {r.code for r in dense[k].reasons} for k in vllm)
