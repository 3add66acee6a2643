"""Loading accounting, borrowed embedding / head, smoke inputs."""

from __future__ import annotations

import json

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("triton")

from safetensors.torch import save_file  # noqa: E402

from dflash2_ckpt.errors import SourceError  # noqa: E402
from dflash2_ckpt.smoke.embedding import borrow  # noqa: E402
from dflash2_ckpt.smoke.inputs import make_inputs  # noqa: E402
from dflash2_ckpt.smoke.weights import load_weights, parameter_shapes  # noqa: E402

from ._smoke_tiny import tiny_embed, tiny_params, tiny_spec, write  # noqa: E402

CPU = torch.device("cpu")


def codes(findings):
    return sorted(f.code for f in findings)


def test_parameter_counts_follow_the_contract():
    for v, per_layer, extra in (("v1", 11, 0), ("v2", 15, 3)):
        assert len(parameter_shapes(tiny_spec(v))) == 3 + per_layer * 2 + extra
    assert "layers.0.self_attn.q_proj.bias" in parameter_shapes(tiny_spec("v1", attention_bias=True))


def test_clean_checkpoint_loads_every_tensor(tmp_path):
    spec = tiny_spec()
    tensors = {**tiny_params(spec), **tiny_embed(spec)}
    w = load_weights(spec, write(tmp_path, tensors), CPU)
    assert w.findings == [] and w.complete
    assert set(w.params) == set(parameter_shapes(spec)) and set(w.borrowed) == {
        "embed_tokens.weight",
        "lm_head.weight",
    }
    assert torch.equal(w.params["fc.weight"], tensors["fc.weight"])


def test_extra_tensor_is_a_finding(tmp_path):
    spec = tiny_spec()
    w = load_weights(
        spec, write(tmp_path, {**tiny_params(spec), "layers.0.extra.weight": torch.zeros(3)}), CPU
    )
    assert codes(w.findings) == ["DF701"] and w.findings[0].tensor == "layers.0.extra.weight"
    assert w.complete  # an unconsumed tensor does not stop the forward


def test_v2_tensors_under_a_v1_spec_are_not_consumed(tmp_path):
    v2 = tiny_spec("v2")
    w = load_weights(tiny_spec("v1"), write(tmp_path, tiny_params(v2)), CPU)
    assert codes(w.findings) == ["DF701"] * (4 * 2 + 3)


def test_missing_tensor_is_a_finding(tmp_path):
    spec = tiny_spec()
    tensors = tiny_params(spec)
    del tensors["candidate_selector.successor_codebook"], tensors["layers.1.mlp_conv.base_kernel"]
    w = load_weights(spec, write(tmp_path, tensors), CPU)
    assert codes(w.findings) == ["DF702", "DF702"] and not w.complete
    assert {f.tensor for f in w.findings} == {
        "candidate_selector.successor_codebook",
        "layers.1.mlp_conv.base_kernel",
    }


def test_wrong_shape_and_dtype_are_findings(tmp_path):
    spec = tiny_spec()
    tensors = tiny_params(spec)
    tensors["norm.weight"] = torch.ones(7)
    tensors["hidden_norm.weight"] = torch.ones(spec.hidden_size, dtype=torch.int32)
    w = load_weights(spec, write(tmp_path, tensors), CPU)
    assert codes(w.findings) == ["DF713", "DF713"] and not w.complete


def test_codebook_weight_suffix_is_accepted_once(tmp_path):
    spec = tiny_spec()
    tensors = tiny_params(spec)
    cb = tensors.pop("candidate_selector.predecessor_codebook")
    tensors["candidate_selector.predecessor_codebook.weight"] = cb
    w = load_weights(spec, write(tmp_path, tensors), CPU)
    assert w.findings == [] and torch.equal(w.params["candidate_selector.predecessor_codebook"], cb)
    tensors["candidate_selector.predecessor_codebook"] = cb.clone()
    w = load_weights(spec, write(tmp_path / "both", tensors), CPU)
    assert codes(w.findings) == ["DF701"]


def test_bf16_and_sharded_files(tmp_path):
    spec = tiny_spec()
    tensors = {k: v.to(torch.bfloat16) for k, v in tiny_params(spec).items()}
    names = sorted(tensors)
    files = {
        **write(tmp_path, {k: tensors[k] for k in names[:10]}, "a.safetensors"),
        **write(tmp_path, {k: tensors[k] for k in names[10:]}, "b.safetensors"),
    }
    w = load_weights(spec, files, CPU)
    assert w.findings == [] and all(t.dtype == torch.float32 for t in w.params.values())


def test_borrow_prefers_checkpoint_then_target_then_random(tmp_path):
    spec = tiny_spec()
    emb = tiny_embed(spec)
    b = borrow(spec, dict(emb), None, 0, CPU)
    assert b.source == {"embed_tokens": "checkpoint", "lm_head": "checkpoint"} and b.findings == []
    b = borrow(spec, {}, None, 0, CPU)
    assert b.source == {"embed_tokens": "random", "lm_head": "random"} and codes(b.findings) == ["DF711"]
    assert torch.equal(b.embed, borrow(spec, {}, None, 0, CPU).embed)  # seeded
    assert b.embed.shape == (spec.vocab_size, spec.hidden_size)

    # a sharded, tied target: the head falls back to the embedding
    target = tmp_path / "target"
    target.mkdir()
    save_file(
        {"model.embed_tokens.weight": emb["embed_tokens.weight"]},
        str(target / "model-00001-of-00002.safetensors"),
    )
    save_file(
        {"model.norm.weight": torch.ones(spec.hidden_size)}, str(target / "model-00002-of-00002.safetensors")
    )
    (target / "model.safetensors.index.json").write_text(
        json.dumps(
            {
                "weight_map": {
                    "model.embed_tokens.weight": "model-00001-of-00002.safetensors",
                    "model.norm.weight": "model-00002-of-00002.safetensors",
                }
            }
        )
    )
    (target / "config.json").write_text(json.dumps({"tie_word_embeddings": True}))
    b = borrow(spec, {}, target, 0, CPU)
    assert b.source == {"embed_tokens": "target", "lm_head": "target"} and b.findings == []
    assert torch.equal(b.head, emb["embed_tokens.weight"])
    # untied and no lm_head: the head is random, and the report says so
    (target / "config.json").write_text(json.dumps({"tie_word_embeddings": False}))
    b = borrow(spec, {}, target, 0, CPU)
    assert b.source["lm_head"] == "random" and codes(b.findings) == ["DF711"]
    # a copy of the wrong shape is refused, not used
    b = borrow(spec, {"lm_head.weight": torch.zeros(3, spec.hidden_size)}, None, 0, CPU)
    assert codes(b.findings) == ["DF711", "DF713"] and b.source["lm_head"] == "random"
    with pytest.raises(SourceError):
        borrow(spec, {}, tmp_path / "nope", 0, CPU)


def test_inputs_random_and_from_file(tmp_path):
    spec = tiny_spec()
    a, b = make_inputs(spec, block_size=5, seed=3), make_inputs(spec, block_size=5, seed=3)
    assert torch.equal(a.hidden, b.hidden) and torch.equal(a.anchors, b.anchors)
    assert a.hidden.shape == (2, 15, spec.fc_in_features) and a.source == "random"
    f = tmp_path / "h.safetensors"
    save_file({"hidden_states": torch.randn(9, spec.fc_in_features), "anchor_ids": torch.tensor([4])}, str(f))
    c = make_inputs(spec, block_size=5, seed=0, hidden_states=f)
    assert (
        c.hidden.shape == (1, 9, spec.fc_in_features)
        and c.anchors.tolist() == [4]
        and c.source == "h.safetensors"
    )
    save_file({"x": torch.randn(9, 3)}, str(f))
    with pytest.raises(SourceError, match="fc needs"):
        make_inputs(spec, block_size=5, seed=0, hidden_states=f)
    with pytest.raises(SourceError):
        make_inputs(spec, block_size=5, seed=0, hidden_states=tmp_path / "missing.safetensors")


def test_speculators_target_copies_and_vocab_maps_are_not_drafter_parameters(tmp_path):
    """verifier_lm_head is the target's head (the role table says so): borrowed, never DF701."""
    spec = tiny_spec()
    embed = tiny_embed(spec)
    extra = {
        "verifier_lm_head.weight": embed["lm_head.weight"],
        "verifier_norm.weight": torch.ones(spec.hidden_size),
        "d2t": torch.zeros(4, dtype=torch.int64),
    }
    w = load_weights(spec, write(tmp_path, {**tiny_params(spec), **extra}), CPU)
    assert w.findings == [] and w.complete
    assert set(w.borrowed) == {"lm_head.weight"}
    assert torch.equal(w.borrowed["lm_head.weight"], embed["lm_head.weight"].float())


def test_model_prefixed_names_fill_the_bare_parameter(tmp_path):
    spec = tiny_spec()
    params = tiny_params(spec)
    params["model.fc.weight"] = params.pop("fc.weight")
    w = load_weights(spec, write(tmp_path, params), CPU)
    assert w.findings == [] and "fc.weight" in w.params
