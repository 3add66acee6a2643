"""diff's own decoder of the compressed-tensors formats (diff/ct_decode.py) against the library, the decoder of
record: the same float32 bits for every quantized fixture and over random shapes, scale dtypes, strategies and
stored codes (every nibble / byte value, not only those a quantizer writes)."""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

torch = pytest.importorskip("torch")
pytest.importorskip("compressed_tensors")

import quantized  # noqa: E402
from conftest import FIXTURES  # noqa: E402
from dflash2_ckpt.diff import ct_decode, dequant  # noqa: E402
from dflash2_ckpt.diff.dequant import ALL, dequantize_rows  # noqa: E402
from dflash2_ckpt.diff.sides import SafetensorsSide  # noqa: E402
from dflash2_ckpt.quant.config import parse_quant_config  # noqa: E402


def _same_bits(a: torch.Tensor, b: torch.Tensor) -> bool:
    """Identical float32 bit patterns, any NaN matching any NaN (the library's NaN payloads are its own)."""
    if a.shape != b.shape or a.dtype != torch.float32 or b.dtype != torch.float32:
        return False
    na, nb = torch.isnan(a), torch.isnan(b)
    return bool(torch.equal(na, nb)) and bool(
        torch.equal(torch.where(na, 0, a.view(torch.int32)), torch.where(nb, 0, b.view(torch.int32)))
    )


def _both(monkeypatch: pytest.MonkeyPatch, *args: Any) -> tuple[torch.Tensor, torch.Tensor, bool]:
    """(ours, the library's, whether ours ran) for one dequantize_rows call."""
    ran: list[bool] = []
    real = ct_decode.supported

    def spy(*a: Any, **k: Any) -> bool:
        ran.append(real(*a, **k))
        return ran[-1]

    monkeypatch.setattr(ct_decode, "supported", spy)
    ours, n1 = dequantize_rows(*args)
    monkeypatch.setattr(ct_decode, "supported", lambda *a, **k: False)
    lib, n2 = dequantize_rows(*args)
    monkeypatch.setattr(ct_decode, "supported", real)
    assert n1 == n2 or (math.isnan(n1) and math.isnan(n2))  # the predicted noise: from the same values
    return ours, lib, all(ran)


@pytest.mark.parametrize("scheme", ["w4a16", "w8a16", "fp8", "nvfp4"])
def test_every_fixture_module_decodes_to_the_librarys_bits(
    scheme: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    side = SafetensorsSide(FIXTURES / "quantized" / scheme)
    assert side.view.config is not None and side._quant
    for name, module in side._quant.items():
        mod = side.view.modules[module]
        assert mod.scheme is not None and mod.logical is not None
        rows = mod.logical[0]
        for r0, r1 in ((0, rows), (0, min(rows, 32)), (min(rows, 32), rows)):  # whole and in row chunks
            if r0 >= r1:
                continue
            ours, lib, ran = _both(
                monkeypatch,
                mod.scheme,
                side.view.config,
                side.raw_quant,
                mod.module,
                side._read,
                mod.logical,
                r0,
                r1,
            )
            assert ran, (scheme, name)
            assert _same_bits(ours, lib), (scheme, name, r0, r1)
    side.close()


def _reader(sd: dict[str, torch.Tensor]) -> Any:
    def read(name: str, r0: int, r1: int) -> torch.Tensor:
        t = sd[name]
        t = t.reshape(1, 1) if t.ndim == 0 else (t.reshape(-1, 1) if t.ndim == 1 else t)
        return t if r1 >= ALL else t[r0:r1]

    return read


VARIANTS = {
    "w4a16": [
        {"group_size": 32},
        {"group_size": 128},
        {"group_size": 32, "symmetric": False},
        {"strategy": "channel", "group_size": None},
        {"strategy": "channel", "group_size": None, "symmetric": False},
    ],
    "w8a16": [
        {"strategy": "channel", "group_size": None},
        {"group_size": 64},
        {"strategy": "channel", "group_size": None, "symmetric": False},
    ],
    "fp8": [{"strategy": "channel"}, {"strategy": "tensor"}],
    "nvfp4": [{}],
}


@given(
    scheme=st.sampled_from(sorted(VARIANTS)),
    variant=st.integers(0, 4),
    rows=st.sampled_from([32, 64, 96]),
    cols=st.sampled_from([128, 256]),
    dtype=st.sampled_from(["float32", "bfloat16", "float16"]),
    scale=st.sampled_from([1e-3, 1.0, 300.0]),
    scramble=st.booleans(),
    seed=st.integers(0, 2**16),
)
@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
def test_random_tensors_decode_to_the_librarys_bits(
    scheme: str,
    variant: int,
    rows: int,
    cols: int,
    dtype: str,
    scale: float,
    scramble: bool,
    seed: int,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    over = VARIANTS[scheme][variant % len(VARIANTS[scheme])]
    g = torch.Generator().manual_seed(seed)
    w = (scale * torch.randn(rows, cols, generator=g)).to(getattr(torch, dtype))
    sd, qc = quantized.compress({"x.weight": w}, scheme, [], over)
    main = "x.weight" if scheme == "fp8" else "x.weight_packed"
    if scramble:  # every stored code, also those no quantizer writes (FP8 NaN included)
        t = sd[main]
        raw = torch.randint(0, 256, (t.numel() * t.element_size(),), generator=g, dtype=torch.uint8)
        sd[main] = raw.view(t.dtype).reshape(t.shape)
    cfg = parse_quant_config({"quantization_config": qc})
    assert cfg is not None
    s = cfg.scheme_for("x")
    assert s is not None
    for r0, r1 in ((0, rows), (32, rows)):
        if r0 >= r1:
            continue
        ours, lib, ran = _both(monkeypatch, s, cfg, qc, "x", _reader(sd), (rows, cols), r0, r1)
        assert ran
        assert _same_bits(ours, lib), (scheme, over, dtype)


def test_layouts_not_covered_go_to_the_library() -> None:
    cfg = parse_quant_config(
        {
            "quantization_config": quantized.compress(
                {"x.weight": torch.randn(32, 128)}, "w4a16", [], {"group_size": 32}
            )[1]
        }
    )
    assert cfg is not None
    s = cfg.scheme_for("x")
    assert s is not None
    scale = torch.ones(32, 4)
    assert ct_decode.supported("ct-pack", s, scale, 128)
    assert not ct_decode.supported("ct-pack", s, scale.double(), 128)  # a float64 scale
    assert not ct_decode.supported("ct-pack", s, torch.ones(32, 3), 128)  # groups that do not cover the row
    assert not ct_decode.supported("ct-pack", s, torch.ones(32, 4), 120)  # a group that does not divide it
    from dataclasses import replace

    assert not ct_decode.supported("ct-pack", replace(s, bits=3), scale, 128)
    assert not ct_decode.supported("ct-pack", replace(s, strategy="block"), scale, 128)
    assert dequant._ct_decompress is not None


# --- the noise models, computed in place, against their out-of-place expressions (the receipts' own) --------------

SPECIAL_VALUES = [
    0.0,
    -0.0,
    2.0,
    4.0,
    1.9999999,
    3.9999998,
    float("nan"),
    float("inf"),
    -float("inf"),
    1e-45,
    -2.0,
    6.0,
    1.17549435e-38,
    3.4e38,
]


@given(seed=st.integers(0, 2**16), scale=st.sampled_from([1e-30, 1e-3, 1.0, 7.0, 1e30]))
@settings(max_examples=40, deadline=None)
def test_noise_models_in_place_equal_the_expressions(seed: int, scale: float) -> None:
    g = torch.Generator().manual_seed(seed)
    q = torch.randn(300, 64, generator=g) * scale
    q.view(-1)[: len(SPECIAL_VALUES)] = torch.tensor(SPECIAL_VALUES)
    s = torch.rand(300, 64, generator=g)
    aq = q.abs()
    fp4 = torch.where(aq < 2, 0.5, torch.where(aq < 4, 1.0, 2.0)) * s
    fp4 = fp4 * fp4 / 12
    ax = q.abs().clamp_min(torch.finfo(torch.float32).tiny)
    step = torch.exp2(torch.floor(torch.log2(ax)) - 3)
    grid = step * step / 12
    before = q.clone()
    assert torch.equal(dequant._fp4_var(q, s).view(torch.int32), fp4.view(torch.int32))
    assert torch.equal(dequant._float_grid_var(q, 3).view(torch.int32), grid.view(torch.int32))
    assert torch.equal(q.view(torch.int32), before.view(torch.int32))  # the input is left as it was
