"""`dflash2-ckpt diff` on GGUF drafters quantized by llama-quantize (the K-quants users download: Q4_K_M,
Q5_K_M, Q6_K, and Q4_0), through the command: a verdict for every tensor, rounding noise where the file
is quantized, `different` for a damaged block, in both directions. The gguf package dequantizes each type;
no type may end in an internal error (issue: `KeyError: 'Q8_0'` through the CLI, exit 3)."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from _kit.cli import invoke_cli
from dflash2_ckpt.cli import main
from gguf import GGUFReader

ROOT = Path(__file__).resolve().parents[2]
TARGET = ROOT / "fixtures" / "targets" / "tiny-target"

pytest.importorskip("torch")


@pytest.fixture(scope="module")
def wide(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A DFlash v1 drafter whose rows are whole 256-element K-quant super-blocks (the fixture writer's seeded
    values), and its F32 GGUF."""
    sys.path.insert(0, str(ROOT / "fixtures"))
    import build as fixtures  # fixtures/build.py

    root = tmp_path_factory.mktemp("wide")
    cfg = fixtures.nested("v1")
    cfg.update(hidden_size=256, intermediate_size=512, head_dim=64)
    src = fixtures.write(root / "drafter", cfg, fixtures.layout(cfg))
    f32 = root / "drafter.f32.gguf"
    r = invoke_cli(
        main,
        ["convert", str(src), "--to", "gguf", "-o", str(f32), "--target", str(TARGET), "--outtype", "f32"],
    )
    assert r.exit_code == 0, r.output
    return src, f32


def _quantize(engine: dict[str, str], f32: Path, out: Path, kind: str) -> Path:
    res = subprocess.run(
        [engine["llama_quantize"], "--allow-requantize", str(f32), str(out), kind],
        capture_output=True,
        text=True,
    )
    assert res.returncode == 0, res.stdout[-1500:] + res.stderr[-1500:]
    return out


def _diff(derived: Path, reference: Path) -> tuple[int, dict[str, dict]]:
    r = invoke_cli(main, ["diff", str(derived), "-r", str(reference), "--format", "json"])
    return r.exit_code, {t["name"]: t for t in json.loads(r.stdout)["tensors"]}


# llama-quantize's mix -> the ggml types it writes for the 2-D tensors of this drafter
KINDS = {
    "Q4_0": {"Q4_0"},
    "Q4_K_M": {"Q4_K", "Q6_K"},
    "Q5_K_M": {"Q5_K", "Q6_K"},
    "Q6_K": {"Q6_K"},
    "Q4_K_S": {"Q4_K", "Q5_K"},
}


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_the_command_diffs_each_quantized_type(kind, engine, wide, tmp_path):
    src, f32 = wide
    q = _quantize(engine, f32, tmp_path / f"{kind}.gguf", kind)
    types = {t.name: t.tensor_type.name for t in GGUFReader(q).tensors}
    assert {v for v in types.values() if v != "F32"} == KINDS[kind]
    code, rows = _diff(q, src)
    assert code == 0 and len(rows) == len(types)
    for row in rows.values():
        quantized = row["scheme"] is not None
        assert row["verdict"] == ("quantization-noise" if quantized else "equal"), row
    assert {r["scheme"] for r in rows.values() if r["scheme"]} == {t.lower() for t in KINDS[kind]}
    # the quantized file as the reference side: a verdict for every tensor, no internal error (exit 3); the
    # dense side is not a quantization of the quantized one, so its 2-D tensors differ from it
    code, back = _diff(src, q)
    assert code == 1 and set(back) == set(rows)
    assert {n for n, r in back.items() if r["verdict"] == "different"} == {
        n for n, r in rows.items() if r["scheme"]
    }


def test_a_damaged_k_quant_tensor_is_different(engine, wide, tmp_path):
    from _kit.gguf import header_of

    src, f32 = wide
    q = _quantize(engine, f32, tmp_path / "q4_k_m.gguf", "Q4_K_M")
    raw = bytearray(q.read_bytes())
    h = header_of(q)
    fc = next(t for t in h.tensors if t.name == "fc.weight")
    assert fc.type_name == "Q4_K"
    block = 144  # one Q4_K super-block: 256 weights
    blocks = [raw[i : i + block] for i in range(fc.begin, fc.end, block)]
    raw[fc.begin : fc.end] = b"".join(reversed(blocks))  # valid blocks, each in the wrong place
    q.write_bytes(bytes(raw))
    code, rows = _diff(q, src)
    assert code == 1 and rows["fc.weight"]["verdict"] == "different", rows["fc.weight"]
    assert Counter(r["verdict"] for n, r in rows.items() if n != "fc.weight")["different"] == 0
