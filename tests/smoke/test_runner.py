"""The whole smoke forward on tiny checkpoints of both versions and both dialects."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("triton")

from safetensors.torch import save_file  # noqa: E402

from dflash2_ckpt.report.text_smoke import smoke_lines  # noqa: E402
from dflash2_ckpt.smoke import SmokeReport, run_smoke  # noqa: E402
from dflash2_ckpt.smoke.runner import smoke  # noqa: E402

from ._smoke_tiny import tiny_embed, tiny_params, tiny_spec, write  # noqa: E402

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "good"


def run(tmp_path, spec, tensors, **kw) -> SmokeReport:
    return smoke(spec, write(tmp_path, tensors), label=str(tmp_path), **kw)


def codes(report):
    return sorted(f.code for f in report.findings)


def test_v2_smoke_passes_and_reports_everything(tmp_path):
    spec = tiny_spec("v2")
    r = run(tmp_path, spec, {**tiny_params(spec), **tiny_embed(spec)})
    assert codes(r) == ["DF714", "DF715"] and r.passed and not r.failed(strict=True)  # influence, as info
    assert r.device == "cpu" and r.triton_mode == "interpret"
    assert r.embedding_source == {"embed_tokens": "checkpoint", "lm_head": "checkpoint"}
    assert len(r.paths) == 2
    for p in r.paths:
        assert len(p["greedy"]) == len(p["sampled"]) == spec.block_size - 1
        assert all(0 <= t < spec.vocab_size for t in p["greedy"] + p["sampled"])
    for stage in ("load", "forward", "walk_triton", "walk_triton_sampled", "conv_triton_sample", "ablation"):
        assert r.timings[stage] >= 0
    assert "forward_triton_conv" not in r.timings and r.inputs["triton_conv"].startswith("sample: layers.0")
    ab = r.ablation
    assert set(ab["conv"]) == {f"layers.{i}.{m}" for i in range(2) for m in ("attention_conv", "mlp_conv")}
    assert all(v["relative_change"] > 1e-3 for v in ab["conv"].values())
    assert ab["selector_slots_changed"] > 0
    assert ab["selector_sampled_contexts"] == 512 and 0 < ab["selector_sampled_slots_changed"] <= 1
    doc = json.loads(json.dumps(r.to_json()))
    assert doc["passed"] is True and doc["paths"][0]["greedy"] == r.paths[0]["greedy"]
    assert "result: passed" in "\n".join(smoke_lines(r))


def test_same_seed_same_tokens_other_seed_other_inputs(tmp_path):
    spec = tiny_spec("v2")
    tensors = {**tiny_params(spec), **tiny_embed(spec)}
    a, b = run(tmp_path / "a", spec, tensors, seed=4), run(tmp_path / "b", spec, tensors, seed=4)
    assert a.paths == b.paths
    c = run(tmp_path / "c", spec, tensors, seed=5)
    assert [p["anchor"] for p in c.paths] != [p["anchor"] for p in a.paths] or c.paths != a.paths


def test_identity_conv_is_inert_and_equals_v1(tmp_path):
    spec = tiny_spec("v2")
    r = run(tmp_path, spec, {**tiny_params(spec, identity_conv=True), **tiny_embed(spec)})
    assert codes(r) == ["DF705"] * 4 + ["DF714"] and r.passed  # warnings only
    assert r.failed(strict=True)
    f = r.findings[0]
    assert f.details["identity_init"] is True and f.details["slots_changed"] == 0.0
    assert r.ablation["all_convs_slots_changed"] == 0.0


def test_zero_selector_is_inert(tmp_path):
    spec = tiny_spec("v2")
    r = run(tmp_path, spec, {**tiny_params(spec, zero_selector=True), **tiny_embed(spec)})
    assert codes(r) == ["DF706", "DF715"]
    f = next(f for f in r.findings if f.code == "DF706")
    assert f.details == {"reason": "its predecessor codebook is zero"}
    assert r.ablation["selector_sampled_contexts"] == 0


def test_live_selector_is_measured_not_called_inert(tmp_path):
    """Codebooks random and far from zero, but a projection so small that the 14 smoke slots do not move:
    the weights do not make it inert, so it is measured over sampled contexts and reported as info."""
    spec = tiny_spec("v2")
    params = tiny_params(spec)
    params["candidate_selector.hidden_projection.weight"] *= 1e-6
    r = run(tmp_path, spec, {**params, **tiny_embed(spec)})
    assert float(params["candidate_selector.predecessor_codebook"].abs().mean()) > 0.5
    assert r.ablation["selector_slots_changed"] == 0.0  # what used to raise DF706
    assert "DF706" not in codes(r) and r.passed and not r.failed(strict=True)
    f = next(f for f in r.findings if f.code == "DF714")
    assert f.severity == "info" and f.details["contexts"] == 512


def test_v1_smoke_is_per_slot_argmax(tmp_path):
    spec = tiny_spec("v1")
    emb = tiny_embed(spec)
    r = run(tmp_path, spec, {**tiny_params(spec), **emb})
    assert codes(r) == [] and r.version == "v1"
    assert all("sampled" not in p and len(p["greedy"]) == 4 for p in r.paths)


def test_missing_tensor_stops_before_the_forward(tmp_path):
    spec = tiny_spec("v2")
    tensors = tiny_params(spec)
    del tensors["layers.0.mlp.up_proj.weight"]
    tensors["layers.0.mlp.up_proj.weights"] = torch.zeros(2)
    r = run(tmp_path, spec, tensors)
    assert codes(r) == ["DF701", "DF702", "DF711"] and not r.passed
    assert r.paths == [] and "forward" not in r.stages_run


def test_non_finite_weights_are_reported(tmp_path):
    spec = tiny_spec("v2")
    tensors = {**tiny_params(spec), **tiny_embed(spec)}
    tensors["layers.1.mlp.down_proj.weight"][0, 0] = float("nan")
    r = run(tmp_path, spec, tensors)
    assert codes(r) == ["DF703"]
    assert r.findings[0].details["stage"] == "layer1"


def test_block_size_option_and_missing_config_values(tmp_path):
    spec = tiny_spec(
        "v2", block_size=None, mask_token_id=None, rope_scaling={"rope_type": "yarn", "factor": 4.0}
    )
    tensors = {**tiny_params(spec), **tiny_embed(spec)}
    r = run(tmp_path, spec, tensors)
    assert codes(r) == ["DF712"] * 3 + ["DF714", "DF715"]
    assert r.inputs["block_size"] == 8 and len(r.paths[0]["greedy"]) == 7
    r = run(tmp_path / "b", spec, tensors, block_size=3)
    assert r.inputs["block_size"] == 3 and len(r.paths[0]["greedy"]) == 2


def test_hidden_states_file_and_target(tmp_path):
    spec = tiny_spec("v2")
    emb = tiny_embed(spec)
    target = tmp_path / "target"
    target.mkdir()
    save_file(
        {"model.embed_tokens.weight": emb["embed_tokens.weight"], "lm_head.weight": emb["lm_head.weight"]},
        str(target / "model.safetensors"),
    )
    hs = tmp_path / "hs.safetensors"
    save_file(
        {"hidden_states": torch.randn(3, 6, spec.fc_in_features), "anchor_ids": torch.tensor([1, 2, 3])},
        str(hs),
    )
    r = run(tmp_path / "ck", spec, tiny_params(spec), target=target, hidden_states=hs)
    assert codes(r) == ["DF714", "DF715"] and r.embedding_source == {
        "embed_tokens": "target",
        "lm_head": "target",
    }
    assert [p["anchor"] for p in r.paths] == [1, 2, 3] and r.inputs["context_len"] == 6
    # the target's tensors give the same drafts as identical copies inside the checkpoint
    r2 = run(tmp_path / "ck2", spec, {**tiny_params(spec), **emb}, hidden_states=hs)
    assert [p["greedy"] for p in r2.paths] == [p["greedy"] for p in r.paths]


@pytest.mark.parametrize("name", ["nested-v2", "flat-v2", "nested-v1", "flat-v1"])
def test_fixtures_draft(name):
    path = FIXTURES / name
    if not (path / "config.json").is_file():
        pytest.skip(f"fixture {name} not built")
    r = run_smoke(path, seed=1)
    assert r.version == name[-2:]
    assert not [f for f in r.findings if f.severity == "error"], [f.to_json() for f in r.findings]
    assert r.paths and all(len(p["greedy"]) == r.inputs["block_size"] - 1 for p in r.paths)
    assert r.embedding_source == {"embed_tokens": "random", "lm_head": "random"}
    assert "DF711" in codes(r)


def test_nested_and_flat_fixtures_draft_alike():
    if (
        not (FIXTURES / "nested-v2" / "config.json").is_file()
        or not (FIXTURES / "flat-v2" / "config.json").is_file()
    ):
        pytest.skip("fixtures not built")
    a, b = run_smoke(FIXTURES / "nested-v2"), run_smoke(FIXTURES / "flat-v2")
    assert a.paths == b.paths


def test_unbuildable_geometry_cannot_run(tmp_path):
    from dflash2_ckpt.errors import ConfigError

    spec = tiny_spec("v2", conv_group_size=7)
    with pytest.raises(ConfigError, match="conv_group_size"):
        smoke(spec, {}, label="x")


def test_cpu_smoke_runs_the_triton_conv_on_a_sample_and_catches_a_wrong_kernel(tmp_path, monkeypatch):
    """On a CPU the torch conv runs every layer and the interpreted Triton conv layer 0's four calls on one
    block; a kernel that is off is still found (DF708), and the estimate says which conv runs where."""
    import dflash2_ckpt.smoke.runner as runner
    from dflash2_ckpt.smoke.triton_conv import triton_grouped_dynamic_conv

    calls = []

    def off(y, h, base, proj, side, block):
        calls.append(y.shape[0])
        return triton_grouped_dynamic_conv(y, h, base, proj, side, block) * 1.01

    monkeypatch.setattr(runner, "triton_conv_fn", lambda: off)
    spec = tiny_spec("v2")
    r = run(tmp_path, spec, {**tiny_params(spec), **tiny_embed(spec)})
    assert calls == [r.inputs["block_size"]] * 4  # one block each, four calls
    bad = [f for f in r.findings if f.code == "DF708"]
    assert len(bad) == 4 and "layers.0.attention_conv side 0" in bad[0].message and not r.passed


def test_estimate_before_a_cpu_smoke_names_the_sampled_conv():
    from dflash2_ckpt.smoke.budget import estimate

    spec = tiny_spec("v2")
    cpu, gpu = estimate(spec, requests=2, block=8, interpret=True), estimate(spec, requests=2, block=8)
    assert (
        "Triton (interpreted) on a sample" in cpu.triton_conv and gpu.triton_conv == "every layer (compiled)"
    )
    assert cpu.to_json()["triton_conv"] == cpu.triton_conv and gpu.forwards == cpu.forwards + 1
