"""Against the real files: the speculators 0.9.0 layout key by key, the published 27B drafter as a sparse
3.85 GB checkpoint, the old v1 dialect, and the tensor name variants seen in the wild."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

from _kit.convert import build, layout_of, random_data, target_dir, tensor_bytes
from conftest import REAL, real_config
from dflash2_ckpt.checkpoint import open_checkpoint
from dflash2_ckpt.convert import convert
from dflash2_ckpt.convert.exactness import drafter_differences
from dflash2_ckpt.dev.synth import materialise, read_tensor_list
from dflash2_ckpt.usecases.verify import verify

SPEC_TSV = REAL / "speculators-0.9.0_tiny-dflash2.tensors.tsv"


def speculators_as_nested() -> dict[str, Any]:
    """The drafter of the real speculators tiny config, stated in the nested dialect."""
    flat = real_config("speculators-0.9.0_tiny-dflash2")
    root = dict(flat["transformer_layer_config"])
    root.update(
        architectures=["DFlash2DraftModel"], is_causal=False, dtype="float32", transformers_version="5.19.0"
    )
    root["dflash_config"] = {
        "target_layer_ids": [0, 2, 4],
        "block_size": 8,
        "mask_token_id": 95,
        "conv_kernel_size": 2,
        "conv_group_size": 16,
        "selector_rank": 256,
        "selector_top_k": 16,
        "causal": False,
    }
    return root


def test_flat_output_matches_what_speculators_saves(tmp_path: Path) -> None:
    tensors = read_tensor_list(SPEC_TSV)
    src = materialise(tmp_path / "src", speculators_as_nested(), tensors, data=random_data(1))
    target = target_dir(tmp_path / "target")
    r = convert(src, tmp_path / "out", to="flat", target=target, verifier_name="tiny/verifier")
    written = json.loads((tmp_path / "out" / "config.json").read_text())
    real = real_config("speculators-0.9.0_tiny-dflash2")
    # auto_map is the one deliberate difference: it points at a config.py that only speculators can write
    assert set(written) == set(real) - {"auto_map"}
    for key in written:
        assert written[key] == real[key], key
    assert set(written["transformer_layer_config"]) == set(real["transformer_layer_config"])
    assert {n for n, *_ in tensors} == set(tensor_bytes(tmp_path / "out"))
    assert r.counts()["drop"] == 0 and not verify(tmp_path / "out").failed()


def test_real_speculators_checkpoint_to_nested(tmp_path: Path) -> None:
    cfg = real_config("speculators-0.9.0_tiny-dflash2")
    src = materialise(tmp_path / "src", cfg, read_tensor_list(SPEC_TSV), data=random_data(2))
    (src / "config.py").write_text("# speculators remote code\n")
    (src / "README.md").write_text("drafter card\n")
    r = convert(src, tmp_path / "out", to="nested")
    out = json.loads((tmp_path / "out" / "config.json").read_text())
    assert out["is_causal"] is False and out["dflash_config"]["causal"] is False
    assert out["dflash_config"]["target_layer_ids"] == [0, 2, 4]
    assert "auto_map" not in out and not (tmp_path / "out" / "config.py").exists()
    assert (tmp_path / "out" / "README.md").read_text() == "drafter card\n"
    dropped = {c.src for c in r.config_changes if c.action == "dropped"}
    assert {"auto_map", "speculators_config", "speculators_version", "speculators_model_type"} <= dropped
    assert ("config.py", "remote code named by auto_map, which is not carried over") in r.files_skipped
    assert not verify(tmp_path / "out").failed()
    assert tensor_bytes(src) == tensor_bytes(tmp_path / "out")


def test_27b_sparse_nested_to_flat_and_back(tmp_path: Path) -> None:
    """The published layout, 3,848,817,896 B with the data as a hole: streamed for real, and it stays sparse."""
    cfg = real_config("z-lab_Qwen3.8-27B-DFlash2")
    src = materialise(tmp_path / "src", cfg, read_tensor_list(REAL / "z-lab_Qwen3.8-27B-DFlash2.tensors.tsv"))
    size = (src / "model.safetensors").stat().st_size
    assert size == 3_848_817_896
    plan = convert(
        src,
        tmp_path / "flat",
        to="flat",
        verifier_name="Qwen/Qwen3.8-27B",
        verifier_architectures=("Qwen3ForCausalLM",),
        dry_run=True,
    )
    assert plan.bytes_copied == 3_848_808_960 and not (tmp_path / "flat").exists()
    t0 = time.monotonic()
    r = convert(
        src,
        tmp_path / "flat",
        to="flat",
        verifier_name="Qwen/Qwen3.8-27B",
        verifier_architectures=("Qwen3ForCausalLM",),
    )
    assert time.monotonic() - t0 < 20 and r.tensors_verified == 81
    out = tmp_path / "flat" / "model.safetensors"
    assert out.stat().st_size == size and out.stat().st_blocks * 512 < 1 << 20  # still a hole
    flat = json.loads((tmp_path / "flat" / "config.json").read_text())
    assert (
        flat["aux_hidden_state_layer_ids"] == [6, 20, 34, 48, 62]
        and flat["sliding_window_non_causal"] is True
    )
    assert flat["speculators_config"]["proposal_methods"][0]["speculative_tokens"] == 7
    assert not verify(tmp_path / "flat").failed()
    convert(tmp_path / "flat", tmp_path / "nested", to="nested", target=target_dir(tmp_path / "t", layers=64))
    back = json.loads((tmp_path / "nested" / "config.json").read_text())

    def root(c: dict[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in c.items() if k != "dflash_config"}

    assert root(back) == root(cfg)
    assert back["dflash_config"] == {**cfg["dflash_config"], "causal": False}
    assert drafter_differences(open_checkpoint(src).spec, open_checkpoint(tmp_path / "nested").spec) == []


def test_old_v1_dialect(tmp_path: Path) -> None:
    """z-lab v1: top-level block_size and rope_theta, auto_map to dflash.py, full-attention layers."""
    cfg = real_config("z-lab_Qwen3-4B-DFlash-b16")
    src = materialise(tmp_path / "src", cfg, layout_of(cfg, "BF16"))
    (src / "dflash.py").write_text("# remote code\n")
    r = convert(
        src,
        tmp_path / "flat",
        to="flat",
        verifier_name="Qwen/Qwen3-4B",
        verifier_architectures=("Qwen3ForCausalLM",),
    )
    flat = json.loads((tmp_path / "flat" / "config.json").read_text())
    assert flat["speculators_model_type"] == "dflash" and flat["block_size"] == 16
    assert (
        flat["transformer_layer_config"]["rope_theta"] == 1000000
        and flat["sliding_window_non_causal"] is True
    )
    assert not any(k in flat for k in ("conv_kernel_size", "selector_rank", "auto_map"))
    assert ("dflash.py", "remote code named by auto_map, which is not carried over") in r.files_skipped
    assert not verify(tmp_path / "flat").failed()
    convert(tmp_path / "flat", tmp_path / "nested", to="nested")
    back = open_checkpoint(tmp_path / "nested")
    assert drafter_differences(open_checkpoint(src).spec, back.spec) == []
    assert back.config["dflash_config"]["block_size"] == 16 and "block_size" not in back.config


def test_name_variants_renamed_and_target_copies_dropped(tmp_path: Path) -> None:
    cfg = real_config("speculators-0.9.0_tiny-dflash2")
    tensors = read_tensor_list(SPEC_TSV)
    renamed = [(n + ".weight" if n.endswith("_codebook") else n, d, s) for n, d, s in tensors]
    renamed = [("encoder.fc.weight" if n == "fc.weight" else n, d, s) for n, d, s in renamed]
    extra = [("embed_tokens.weight", "F32", (96, 64)), ("lm_head.weight", "F32", (96, 64))]
    src = materialise(tmp_path / "src", cfg, renamed + extra, shards=3, data=random_data(4))
    r = convert(src, tmp_path / "out", to="nested")
    actions = {t.name: (t.action, t.dst_name) for t in r.tensors}
    codebook = "candidate_selector.successor_codebook"
    assert actions[codebook + ".weight"] == ("rename", codebook)
    assert actions["encoder.fc.weight"] == ("rename", "fc.weight")
    assert actions["embed_tokens.weight"] == ("drop", None) and actions["lm_head.weight"] == ("drop", None)
    assert r.bytes_dropped == 2 * 96 * 64 * 4
    out = tensor_bytes(tmp_path / "out")
    src_bytes = tensor_bytes(src)
    assert out["fc.weight"][1] == src_bytes["encoder.fc.weight"][1]
    assert set(out) == {n for n, *_ in tensors}
    index = json.loads((tmp_path / "out" / "model.safetensors.index.json").read_text())
    assert set(index["weight_map"]) == set(out)
    assert index["metadata"]["total_size"] == sum(len(b) for _, b in out.values())
    assert not verify(tmp_path / "out").failed()
    # speculators' own metadata is kept
    raw = (tmp_path / "out" / index["weight_map"]["fc.weight"]).read_bytes()
    assert b'"__metadata__"' not in raw or json.loads(raw[8 : 8 + int.from_bytes(raw[:8], "little")])


def test_shard_left_empty_is_not_written(tmp_path: Path) -> None:
    cfg = real_config("speculators-0.9.0_tiny-dflash2")
    tensors = read_tensor_list(SPEC_TSV) + [("lm_head.weight", "F32", (96, 64))]
    src = materialise(tmp_path / "src", cfg, tensors, shards=37, data=random_data(5))
    r = convert(src, tmp_path / "out", to="nested")
    files = sorted(f.name for f in (tmp_path / "out").glob("*.safetensors"))
    assert len(files) == 36 and any("every tensor in it is dropped" in why for _, why in r.files_skipped)
    assert not verify(tmp_path / "out").failed()


def test_single_file_source_given_as_file(tmp_path: Path) -> None:
    src = build(
        tmp_path / "src", real_config("speculators-0.9.0_tiny-dflash2"), tensors=read_tensor_list(SPEC_TSV)
    )
    convert(src / "model.safetensors", tmp_path / "out", to="nested")
    assert os.path.exists(tmp_path / "out" / "model.safetensors")
