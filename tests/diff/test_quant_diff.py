"""diff: verdicts on the compressed-tensors fixtures, damaged derived checkpoints, hand-encoded ModelOpt / MLX
tensors, the receipt, and the noise bound as a property over tensors quantized by compressed-tensors."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from _kit.cli import invoke_cli

torch = pytest.importorskip("torch")
pytest.importorskip("compressed_tensors")

import quantized  # noqa: E402
from conftest import FIXTURES  # noqa: E402
from dflash2_ckpt.checkpoint import open_checkpoint  # noqa: E402
from dflash2_ckpt.checkpoint.quant import quantized_modules  # noqa: E402
from dflash2_ckpt.cli import main  # noqa: E402
from dflash2_ckpt.dev.synth import materialise  # noqa: E402
from dflash2_ckpt.diff import diff  # noqa: E402
from dflash2_ckpt.diff.compare import Figures  # noqa: E402
from dflash2_ckpt.diff.dequant import ALL, dequantize_rows  # noqa: E402
from dflash2_ckpt.quant.config import parse_quant_config  # noqa: E402
from dflash2_ckpt.sources.local import LocalSource  # noqa: E402

GOOD = FIXTURES / "good" / "nested-v2"
Q = FIXTURES / "quantized"
MANIFEST = json.loads((FIXTURES / "broken" / "MANIFEST.json").read_text())
CKPT = open_checkpoint(GOOD)
CONFIG = json.loads((GOOD / "config.json").read_text())


def _data(ckpt_dir: Path) -> dict[str, bytes]:
    src, ck = LocalSource(ckpt_dir), open_checkpoint(ckpt_dir)
    return {t.name: src.read_range(t.file, t.begin, t.nbytes) for t in ck.tensors.values()}


DENSE_BYTES = _data(GOOD)


@pytest.mark.parametrize("scheme", ["w4a16", "w8a16", "fp8", "nvfp4"])
def test_quantized_fixture_is_noise_where_quantized_and_equal_elsewhere(scheme: str) -> None:
    r = diff(Q / scheme, GOOD)
    assert not r.failed()
    noisy = {f.name for f in r.figures if f.verdict == "quantization-noise"}
    assert noisy == {f"{m}.weight" for m in quantized_modules(open_checkpoint(Q / scheme))}
    assert all(f.verdict == "equal" for f in r.figures if f.name not in noisy)
    assert all((f.cosine or 0) > 0.99 for f in r.figures)


@pytest.mark.parametrize("name", sorted(n for n, w in MANIFEST.items() if "reference" in w))
def test_broken_cases_found_by_diff_exit_1_with_their_code(name: str) -> None:
    want = MANIFEST[name]
    res = invoke_cli(
        main,
        [
            "diff",
            str(FIXTURES / "broken" / name),
            "--reference",
            str(FIXTURES / want["reference"]),
            "--format",
            "json",
        ],
    )
    assert res.exit_code == 1
    report = json.loads(res.output)
    errors = {f["code"] for f in report["findings"] if f["severity"] == "error"}
    assert errors == {want["code"]}


def _derived(tmp: Path, edit: dict[str, Any], drop: tuple[str, ...] = (), add: tuple = ()) -> Path:
    """The dense fixture with some tensors replaced (name -> (shape, bytes)), dropped or added."""
    tensors, data = [], dict(DENSE_BYTES)
    for t in CKPT.tensors.values():
        if t.name in drop:
            continue
        shape, raw = edit.get(t.name, (t.shape, DENSE_BYTES[t.name]))
        tensors.append((t.name, t.dtype, shape))
        data[t.name] = raw
    for name, dtype, shape, raw in add:
        tensors.append((name, dtype, shape))
        data[name] = raw
    return materialise(tmp / "derived", CONFIG, tensors, data=lambda n, _: data[n])


def _f32(name: str) -> torch.Tensor:
    t = CKPT.tensors[name]
    return torch.frombuffer(bytearray(DENSE_BYTES[name]), dtype=torch.float32).reshape(t.shape)


def _verdicts(r: Any) -> dict[str, str]:
    return {f.name: f.verdict for f in r.figures if f.verdict != "equal"}


def test_zeroed_transposed_swapped_missing_extra(tmp_path: Path) -> None:
    up, gate = "layers.0.mlp.up_proj.weight", "layers.0.mlp.gate_proj.weight"
    q = "layers.0.self_attn.q_proj.weight"
    edit = {
        "fc.weight": ((32, 64), bytes(32 * 64 * 4)),
        "layers.0.mlp.down_proj.weight": (
            (64, 32),
            _f32("layers.0.mlp.down_proj.weight").T.contiguous().numpy().tobytes(),
        ),
        up: ((64, 32), DENSE_BYTES[gate]),
        gate: ((64, 32), DENSE_BYTES[up]),
    }
    d = _derived(tmp_path, edit, drop=(q,), add=(("extra.weight", "F32", (2,), bytes(8)),))
    r = diff(d, GOOD)
    assert _verdicts(r) == {
        "fc.weight": "different",
        "layers.0.mlp.down_proj.weight": "different",
        up: "different",
        gate: "different",
        q: "missing",
        "extra.weight": "extra",
    }
    reasons = {f.name: f.reason for f in r.figures}
    assert reasons["fc.weight"].startswith("zeroed") and reasons["layers.0.mlp.down_proj.weight"].startswith(
        "transposed"
    )
    assert reasons[up].startswith("random or swapped")
    assert {f.code for f in r.findings} == {"DF230", "DF231", "DF232"}


def test_bf16_copy_of_an_f32_reference_is_rounding_not_damage(tmp_path: Path) -> None:
    tensors, data = [], {}
    for t in CKPT.tensors.values():
        tensors.append((t.name, "BF16", t.shape))
        data[t.name] = _f32(t.name).to(torch.bfloat16).view(torch.int16).numpy().tobytes()
    d = materialise(tmp_path / "bf16", {**CONFIG, "dtype": "bfloat16"}, tensors, data=lambda n, _: data[n])
    r = diff(d, GOOD)
    assert not r.failed() and set(_verdicts(r).values()) == {"quantization-noise"}


def test_receipt_hashes_every_file_on_both_sides() -> None:
    r = diff(Q / "w8a16", GOOD)
    rec = r.receipt()
    for side, root in (("derived", Q / "w8a16"), ("reference", GOOD)):
        files = rec[side]["files"]
        assert set(files) == {p.name for p in root.iterdir()}
        for name, entry in files.items():
            assert entry["sha256"] == hashlib.sha256((root / name).read_bytes()).hexdigest()
    assert rec["passed"] and len(rec["tensors"]) == len(CKPT.tensors)


def test_cli_writes_receipt_and_passes(tmp_path: Path) -> None:
    out = tmp_path / "receipt.json"
    res = invoke_cli(main, ["diff", str(Q / "fp8"), "-r", str(GOOD), "--receipt", str(out)])
    assert res.exit_code == 0, res.output
    assert "passed" in res.output and json.loads(out.read_text())["counts"]["quantization-noise"] == 15


# --- ModelOpt and MLX, encoded by hand from their published layouts -------------------------------------------


def _grid_reference(tmp: Path, values: dict[str, torch.Tensor]) -> Path:
    tensors, data = [], dict(DENSE_BYTES)
    for t in CKPT.tensors.values():
        v = values.get(t.name)
        tensors.append((t.name, t.dtype, t.shape))
        if v is not None:
            data[t.name] = v.float().contiguous().numpy().tobytes()
    return materialise(tmp / "ref", CONFIG, tensors, data=lambda n, _: data[n])


def test_mlx_affine_decodes_exactly(tmp_path: Path) -> None:
    g = torch.Generator().manual_seed(3)
    q = torch.randint(0, 16, (32, 64), generator=g)
    scales = torch.rand(32, 2, generator=g).to(torch.float16)
    biases = (torch.rand(32, 2, generator=g) - 0.5).to(torch.float16)
    w = q.float() * scales.float().repeat_interleave(32, 1) + biases.float().repeat_interleave(32, 1)
    packed = torch.zeros(32, 8, dtype=torch.int64)
    for k in range(8):  # word c holds columns 8c..8c+7, column 8c+k in bits 4k..4k+3
        packed |= q[:, k::8] << (4 * k)
    raw = packed.to(torch.int64).numpy().astype("<u4").tobytes()
    tensors, data = [], dict(DENSE_BYTES)
    for t in CKPT.tensors.values():
        if t.name == "fc.weight":
            tensors += [
                ("fc.weight", "U32", (32, 8)),
                ("fc.scales", "F16", (32, 2)),
                ("fc.biases", "F16", (32, 2)),
            ]
            data.update(
                {
                    "fc.weight": raw,
                    "fc.scales": scales.numpy().tobytes(),
                    "fc.biases": biases.numpy().tobytes(),
                }
            )
        else:
            tensors.append((t.name, t.dtype, t.shape))
    derived = materialise(
        tmp_path / "mlx",
        {**CONFIG, "quantization": {"group_size": 32, "bits": 4}},
        tensors,
        data=lambda n, _: data[n],
    )
    r = diff(derived, _grid_reference(tmp_path, {"fc.weight": w}))
    fc = next(f for f in r.figures if f.name == "fc.weight")
    assert fc.scheme == "mlx-q4" and fc.verdict in ("equal", "quantization-noise") and fc.max_abs < 1e-6


def test_modelopt_nvfp4_decodes_exactly(tmp_path: Path) -> None:
    g = torch.Generator().manual_seed(5)
    codes = torch.randint(0, 16, (32, 64), generator=g)
    grid = torch.tensor([0, 0.5, 1, 1.5, 2, 3, 4, 6, -0.0, -0.5, -1, -1.5, -2, -3, -4, -6])
    block = torch.full((32, 4), 0.5).to(torch.float8_e4m3fn)
    scale2 = torch.tensor(0.25)
    w = grid[codes] * 0.5 * 0.25
    packed = (codes[:, 0::2] | (codes[:, 1::2] << 4)).to(torch.uint8)  # low nibble first
    tensors, data = [], dict(DENSE_BYTES)
    for t in CKPT.tensors.values():
        if t.name == "fc.weight":
            tensors += [
                ("fc.weight", "U8", (32, 32)),
                ("fc.weight_scale", "F8_E4M3", (32, 4)),
                ("fc.weight_scale_2", "F32", ()),
                ("fc.input_scale", "F32", ()),
            ]
            data.update(
                {
                    "fc.weight": packed.numpy().tobytes(),
                    "fc.weight_scale": block.view(torch.uint8).numpy().tobytes(),
                    "fc.weight_scale_2": scale2.float().numpy().tobytes(),
                    "fc.input_scale": torch.tensor(1.0).numpy().tobytes(),
                }
            )
        else:
            tensors.append((t.name, t.dtype, t.shape))
    cfg = {
        **CONFIG,
        "quantization_config": {
            "quant_method": "modelopt",
            "quant_algo": "NVFP4",
            "exclude_modules": ["*conv*", "*selector*", "layers*"],
        },
    }
    derived = materialise(tmp_path / "mo", cfg, tensors, data=lambda n, _: data[n])
    r = diff(derived, _grid_reference(tmp_path, {"fc.weight": w}))
    fc = next(f for f in r.figures if f.name == "fc.weight")
    assert fc.scheme == "nvfp4" and fc.verdict == "equal"


# --- the noise bound, as a property over compressed-tensors' own quantization -----------------------------------


@given(
    scheme=st.sampled_from(["w4a16", "w8a16", "fp8", "nvfp4"]),
    rows=st.sampled_from([64, 128]),
    cols=st.sampled_from([32, 64, 128]),
    seed=st.integers(0, 2**16),
    scale=st.sampled_from([0.01, 1.0, 30.0]),
)
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_quantized_by_compressed_tensors_is_noise_and_a_random_tensor_is_not(
    scheme: str, rows: int, cols: int, seed: int, scale: float
) -> None:
    g = torch.Generator().manual_seed(seed)
    w = scale * torch.randn(rows, cols, generator=g)
    sd, qc = quantized.compress({"x.weight": w}, scheme, [])
    cfg = parse_quant_config({"quantization_config": qc})
    assert cfg is not None
    s = cfg.scheme_for("x")
    assert s is not None

    def read(name: str, r0: int, r1: int) -> torch.Tensor:
        t = sd[name]
        t = t.reshape(1, 1) if t.ndim == 0 else (t.reshape(-1, 1) if t.ndim == 1 else t)
        return t if r1 >= ALL else t[r0:r1]

    whole = Figures("x")
    chunked = Figures("x")
    dq, noise = dequantize_rows(s, cfg, qc, "x", read, (rows, cols), 0, rows)
    whole.add(dq, w, noise)
    for r0 in range(0, rows, 64):  # chunking changes nothing
        part, n = dequantize_rows(s, cfg, qc, "x", read, (rows, cols), r0, r0 + 64)
        chunked.add(part, w[r0 : r0 + 64], n)
    assert abs(whole.err2 - chunked.err2) <= 1e-5 * max(whole.err2, 1e-30)  # float32 dots per chunk
    whole.decide()
    assert whole.verdict == "quantization-noise", (whole.rel_rms, whole.predicted_rel_rms)
    other = Figures("x")
    other.add(dq, scale * torch.randn(rows, cols, generator=g), noise)
    other.decide()
    assert other.verdict == "different"
