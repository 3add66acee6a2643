"""compat's llama.cpp verdict against what llama.cpp b11434 did, row by row (fixtures/llama_cpp/golden.json).

The record was made by running llama-server on each variant of the recall drafter
(tests/llama_cpp/golden.py); tests/llama_cpp/test_golden_engine.py re-runs the engine when it is built.
Here compat judges the same variants (made without llama.cpp where that is possible) and must agree:
"loads" / "degraded" where the engine loaded the file and drafted, "fails" where it refused it. Where the
engine loaded the file but lost a quarter of its τ or more against the as-converted file (taps not
shifted: 4.43 against 7.75; a v1 file stripped of its conv and selector: 1.12), a verify error may make
compat say "fails" (DF813) rather than let the silent loss pass as "loads".
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = ROOT / "fixtures" / "llama_cpp" / "golden.json"
PAIR = ROOT / "fixtures" / "pairs" / "recall"

pytestmark = pytest.mark.skipif(
    not GOLDEN.is_file() or not (PAIR / "drafter").is_dir(),
    reason="no llama.cpp golden record or recall pair",
)
ROWS = json.loads(GOLDEN.read_text())["rows"] if GOLDEN.is_file() else []
NEEDS_ENGINE = {"q8_0", "q4_0", "q4_k_m", "codebooks-q8_0", "codebooks-q4_0"}  # made by llama-quantize


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from dflash2_ckpt.convert.to_gguf import convert_to_gguf

    out = tmp_path_factory.mktemp("golden") / "drafter.gguf"
    # the target's vocabulary as llama.cpp's converter writes it (convert_hf_to_gguf.py --vocab-only)
    convert_to_gguf(PAIR / "drafter", out, target=None, tokenizer_from=GOLDEN.parent / "target-vocab.gguf")
    return out


def test_every_row_cites_the_build_and_the_record_is_whole() -> None:
    from llama_cpp import golden  # tests/llama_cpp (tests/ is on the path: pyproject `pythonpath`)

    assert {r["variant"] for r in ROWS} == {v.name for v in golden.VARIANTS}
    assert all(r["source"].startswith("llama.cpp b11434:") for r in ROWS)


@pytest.mark.parametrize(
    "row", [r for r in ROWS if r["variant"] not in NEEDS_ENGINE], ids=lambda r: r["variant"]
)
def test_compat_agrees_with_what_llama_cpp_did(row: dict, base: Path, tmp_path: Path) -> None:
    from llama_cpp import golden  # tests/llama_cpp (tests/ is on the path: pyproject `pythonpath`)

    [v] = [v for v in golden.VARIANTS if v.name == row["variant"]]
    verdict, codes = golden.compat_verdict(v.make(base, tmp_path / f"{v.name}.gguf", {}))
    assert (verdict, codes) == (row["compat"], row["codes"])
    assert _agrees(verdict, row), (verdict, row["engine"])


def _agrees(verdict: str, row: dict) -> bool:
    engine = row["engine"]
    if not engine["loads"]:
        return verdict == "fails"
    [base] = [r["engine"]["tau"] for r in ROWS if r["variant"] == "as-converted"]
    if (
        engine["tau"] < 0.75 * base
    ):  # loaded, drafting lost: a stripped v1 is a valid v1 file, so the exact record decides
        return verdict in ("loads", "degraded", "fails")
    return verdict in ("loads", "degraded")


@pytest.mark.parametrize("row", ROWS, ids=lambda r: r["variant"])
def test_recorded_compat_agrees_with_the_engine(row: dict) -> None:
    assert _agrees(row["compat"], row), row
