"""Conversions never change what transformers computes: which conversions transformers can run at all.

transformers (every release with DFlash assisted generation, 5.15 ... the installed one) has one DFlash
model class, MuseGlimmerAssistantModel: DFlash v1 in the assistant export dialect. `convert --to` writes
nested, flat or GGUF, and a GGUF converts back to nested or flat, so no conversion writes a drafter transformers
runs: the assistant source runs there, each of its conversions is refused with exit 2 naming its dialect,
and what a conversion must keep is checked where both run, in the reference loop (the same accepted drafts
at every step), and against transformers' own τ for the source.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from _kit.cli import run_json

PAIR = Path(__file__).resolve().parents[2] / "fixtures" / "pairs" / "tiny"
SOURCE, TARGET = PAIR / "drafter-v1", PAIR / "target"
OPTS = ["--target", str(TARGET), "--max-new-tokens", "32", "--limit", "3", "--device", "cpu"]
pytestmark = pytest.mark.skipif(not (SOURCE / "model.safetensors").is_file(), reason="tiny v1 pair not built")


@pytest.fixture(scope="module")
def converted(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The assistant source in each dialect `convert` writes, as a user converts it (nested, flat, and back
    from flat to nested)."""
    root = tmp_path_factory.mktemp("tf-equivalence")
    out: dict[str, Path] = {}
    for name, src, to in (
        ("nested", SOURCE, "nested"),
        ("flat", SOURCE, "flat"),
        ("flat-nested", None, "nested"),
    ):
        dst = root / name
        code, doc = run_json(
            "convert",
            str(out["flat"] if src is None else src),
            "-o",
            str(dst),
            "--to",
            to,
            "--target",
            str(TARGET),
        )
        assert code == 0, doc
        out[name] = dst
    return out


@pytest.fixture(scope="module")
def engine_source() -> dict:
    code, doc = run_json("accept", str(SOURCE), *OPTS, "--engine", "transformers")
    assert code == 0, doc
    return doc


@pytest.mark.parametrize("name", ["nested", "flat", "flat-nested"])
def test_no_conversion_is_a_drafter_transformers_runs(name, converted, engine_source):
    code, doc = run_json("accept", str(converted[name]), *OPTS, "--engine", "transformers")
    assert code == 2, doc
    assert "assistant export dialect" in doc["error"]["message"] and "dialect" in doc["error"]["message"]
    assert engine_source["engine"] == "transformers" and engine_source["tau"]["mean"] > 2.0


@pytest.fixture(scope="module")
def reference_source() -> dict:
    code, doc = run_json("accept", str(SOURCE), *OPTS)
    assert code == 0, doc
    return doc


@pytest.mark.parametrize("name", ["nested", "flat", "flat-nested"])
def test_each_conversion_drafts_what_the_source_drafts_in_transformers(
    name, converted, engine_source, reference_source
):
    """The reference loop on the conversion takes the same accepted drafts at every step as on the source, and
    counted as transformers counts (tau_reference_committed) its τ is transformers' τ on the source."""
    src = reference_source
    code, conv = run_json("accept", str(converted[name]), *OPTS)
    assert code == 0, conv
    assert [p["accepted_per_step"] for p in conv["prompts"]] == [
        p["accepted_per_step"] for p in src["prompts"]
    ]
    assert conv["tau"] == src["tau"]
    committed = sum(p["generated"] - 1 for p in conv["prompts"]) / sum(p["steps"] for p in conv["prompts"])
    assert committed == pytest.approx(
        engine_source["engine_details"]["parity"]["tau_reference_committed"], abs=1e-4
    )
    assert committed == pytest.approx(engine_source["tau"]["mean"], rel=0.05)
