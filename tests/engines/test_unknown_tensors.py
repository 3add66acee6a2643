"""A stored tensor the drafter's config does not describe (verify's DF202): each engine release's loader
decides. vLLM's AutoWeightsLoader raises on a name its DFlash module has no parameter for (a `.bias` it
ignores, a `mask_hidden` weight fails an assert), so compat says `fails` and names the tensor; SGLang's
load_weights skips it, so compat keeps `loads` (with a note) and verify keeps the DF202 warning.

What each release does was read in the wheels (dflash2_ckpt/engines/released.py cites the anchors,
test_released.py checks them); the expectations below are written from that code, not from compat.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from _kit.cli import invoke
from _kit.convert import build, layout_of
from conftest import FIXTURES

VLLM = (
    "vllm@0.27.1",
    "vllm@0.28.0",
    "vllm@0.29.0",
    "vllm@0.30.0",
    "vllm@0.31.0",
    "vllm@0.33.0",
    "vllm@0.34.0",
)
RAISES = "There is no module or parameter named"


def _config(name: str) -> dict[str, Any]:
    return json.loads((FIXTURES / "good" / name / "config.json").read_text())


def drafter(tmp: Path, good: str, *extra: tuple[str, tuple[int, ...]], **dflash: Any) -> Path:
    """The good fixture's config (and its exact layout) plus the extra tensors."""
    cfg = _config(good)
    if dflash:
        cfg["dflash_config"].update(dflash)
    tensors = layout_of(cfg) + [(n, "F32", s) for n, s in extra]
    return build(tmp / good, cfg, tensors=tensors)


def compat(path: Path | str, *engines: str) -> tuple[int, dict[str, Any]]:
    args = [a for e in engines for a in ("--engine", e)]
    r = invoke("compat", str(path), *args, "--format", "json")
    return r.exit_code, json.loads(r.stdout)


def errors(e: dict[str, Any]) -> list[dict[str, Any]]:
    return [r for r in e["reasons"] if r["severity"] == "error"]


def verify_codes(path: Path | str) -> dict[str, str]:
    r = invoke("verify", str(path), "--format", "json")
    assert r.exit_code == 0, r.stdout  # a warning, not an error: verify passes without --strict
    return {f["code"]: f["severity"] for f in json.loads(r.stdout)["findings"]}


def test_the_fixture_writers_unexpected_tensor_fails_every_vllm_with_dflash2_and_loads_on_sglang() -> None:
    path = FIXTURES / "broken" / "tensor-unexpected"  # fixtures/build.py: + layers.9.mlp.up_proj.weight
    assert verify_codes(path).get("DF202") == "warning"
    rc, doc = compat(
        path, "vllm@0.28.0", "vllm@0.29.0", "vllm@0.31.0", "vllm@0.33.0", "vllm@0.34.0", "sglang@0.5.23"
    )
    assert rc == 1
    by = {e["versions"]: e for e in doc["engines"]}
    for label in ("==0.28.0", ">=0.29,<0.31", ">=0.31,<0.33", ">=0.33,<0.34", ">=0.34"):
        e = by[label]
        assert e["verdict"] == "fails" and e["serve"] is None, label
        refused = [r for r in errors(e) if r["code"] == "DF805"]
        assert len(refused) == 1, label
        msg = refused[0]["message"]
        assert "layers.9.mlp.up_proj.weight" in msg and RAISES in msg
        # the citation: released file + anchor
        assert "vllm==0.27.1..0.34.0:vllm/model_executor/models/utils.py" in msg
        assert "vllm/model_executor/models/qwen3_dflash.py has `loader = AutoWeightsLoader(self)`" in msg
    sglang = by[">=0.5.19"]
    assert sglang["verdict"] == "loads" and sglang["serve"]
    notes = [r["message"] for r in sglang["reasons"] if r["severity"] == "info"]
    assert any(
        "skips layers.9.mlp.up_proj.weight silently" in n and "# Ignore unexpected weights" in n
        for n in notes
    )


@pytest.mark.parametrize(
    "good,engines", [("nested-v1", VLLM), ("nested-v2", VLLM[1:]), ("flat-v2", VLLM[2:])]
)
def test_an_unknown_tensor_fails_vllm_in_each_dialect_and_release(
    tmp_path: Path, good: str, engines: tuple[str, ...]
) -> None:
    path = drafter(tmp_path, good, ("extra_projection.weight", (4, 4)))
    assert verify_codes(path).get("DF202") == "warning"
    rc, doc = compat(path, *engines)
    assert rc == 1
    assert doc["engines"]
    for e in doc["engines"]:
        assert e["verdict"] == "fails", e
        assert any(r["code"] == "DF805" and "extra_projection.weight" in r["message"] for r in errors(e)), e


def test_sglang_loads_the_same_drafter_and_names_what_it_skips(tmp_path: Path) -> None:
    path = drafter(tmp_path, "nested-v2", ("extra_projection.weight", (4, 4)))
    rc, doc = compat(path, "sglang")
    assert rc == 0
    (e,) = doc["engines"]
    assert e["verdict"] == "loads" and not errors(e)
    assert any("skips extra_projection.weight silently" in r["message"] for r in e["reasons"])


def test_an_unexpected_bias_is_ignored_by_vllm(tmp_path: Path) -> None:
    # attention_bias is false, so the bias is not part of the drafter; vLLM ignores unexpected `.bias` names
    path = drafter(tmp_path, "nested-v2", ("layers.0.self_attn.o_proj.bias", (32,)))
    assert verify_codes(path).get("DF202") == "warning"
    rc, doc = compat(path, "vllm")
    assert rc == 0
    (e,) = doc["engines"]
    assert e["verdict"] == "loads" and e["serve"]


def test_a_mask_hidden_weight_fails_vllms_assert(tmp_path: Path) -> None:
    path = drafter(tmp_path, "nested-v2", ("mask_hidden", (32,)))
    rc, doc = compat(path, "vllm@0.29.0", "vllm")
    assert rc == 1
    for e in doc["engines"]:
        assert e["verdict"] == "fails"
        assert any(
            r["code"] == "DF805" and "mask_hidden" in r["message"] and "AssertionError" in r["message"]
            for r in errors(e)
        )


def test_domino_projector_weights_fail_sglang_unless_declared(tmp_path: Path) -> None:
    path = drafter(tmp_path / "a", "nested-v2", ("prefix_gru.weight", (4, 4)))
    rc, doc = compat(path, "sglang@0.5.23")
    assert rc == 1
    (e,) = doc["engines"]
    assert e["verdict"] == "fails"
    assert any(
        r["code"] == "DF805" and "prefix_gru.weight" in r["message"] and "Domino" in r["message"]
        for r in errors(e)
    )
    declared = drafter(tmp_path / "b", "nested-v2", ("prefix_gru.weight", (4, 4)), projector_type="domino")
    rc, doc = compat(declared, "sglang@0.5.23")
    (e,) = doc["engines"]
    assert not any(r["code"] == "DF805" for r in e["reasons"]), e


def test_the_bias_of_a_module_vllm_does_not_have_fails(tmp_path: Path) -> None:
    # utils.py AutoWeightsLoader: the .bias suffix is matched on the missing name, so a bias of a missing
    # module raises at the module ('There is no module or parameter named 'extra_projection' ...')
    path = drafter(tmp_path, "nested-v2", ("extra_projection.bias", (32,)))
    assert verify_codes(path).get("DF202") == "warning"
    rc, doc = compat(path, "vllm@0.29.0", "vllm")
    assert rc == 1
    for e in doc["engines"]:
        assert e["verdict"] == "fails"
        assert any(r["code"] == "DF805" and "extra_projection.bias" in r["message"] for r in errors(e)), e
