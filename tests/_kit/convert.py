"""Builders for convert tests: configs in each dialect's canonical form, tiny checkpoints with random data."""

from __future__ import annotations

import copy
import hashlib
import json
import random
import struct
import zlib
from pathlib import Path
from typing import Any

from hypothesis import strategies as st

from dflash2_ckpt.checkpoint.layout import expected_tensors
from dflash2_ckpt.dev.synth import materialise
from dflash2_ckpt.formats.parse import to_spec

ARCH = {"v1": "DFlashDraftModel", "v2": "DFlash2DraftModel"}
TARGET_LAYERS = 6


def transformer(p: dict[str, Any]) -> dict[str, Any]:
    L = p["layers"]
    types = p["layer_types"]
    out = {
        "model_type": "qwen3",
        "hidden_size": p["H"],
        "intermediate_size": p["I"],
        "num_hidden_layers": L,
        "num_attention_heads": p["nq"],
        "num_key_value_heads": p["nkv"],
        "head_dim": p["hd"],
        "vocab_size": p["V"],
        "rms_norm_eps": 1e-6,
        "hidden_act": "silu",
        "attention_bias": p["bias"],
        "attention_dropout": 0.0,
        "max_position_embeddings": 4096,
        "rope_parameters": {"rope_theta": p["theta"], "rope_type": "default"},
        "layer_types": types,
        "sliding_window": 16 if "sliding_attention" in types else None,
        "use_sliding_window": "sliding_attention" in types,
        "max_window_layers": L,
        "tie_word_embeddings": False,
        "bos_token_id": None,
        "eos_token_id": 1,
        "pad_token_id": 0,
        "initializer_range": 0.02,
        "use_cache": True,
    }
    out.update(p.get("transformer_unknown", {}))
    return out


def drafter_fields(p: dict[str, Any]) -> dict[str, Any]:
    out = {"block_size": p["block"], "mask_token_id": p["mask"]}
    if p["version"] == "v2":
        out.update(
            conv_kernel_size=p["T"], conv_group_size=p["gs"], selector_rank=p["R"], selector_top_k=p["K"]
        )
    out.update(p.get("scales", {}))
    out.update(p.get("drafter_unknown", {}))
    return out


def nested_config(p: dict[str, Any]) -> dict[str, Any]:
    """The form `convert --to nested` writes: explicit is_causal and dflash_config.causal."""
    cfg = {
        "architectures": [ARCH[p["version"]]],
        **transformer(p),
        "is_causal": p["causal"],
        "num_target_layers": TARGET_LAYERS,
        "dtype": p["dtype"],
        "transformers_version": "5.15.0",
    }
    if p.get("target_hidden_size"):
        cfg["target_hidden_size"] = p["target_hidden_size"]
    cfg["dflash_config"] = {"target_layer_ids": list(p["taps"]), **drafter_fields(p), "causal": p["causal"]}
    return cfg


def flat_config(p: dict[str, Any], verifier: str = "tiny/target") -> dict[str, Any]:
    """The form speculators 0.9.0 saves (without auto_map / config.py, which convert never writes)."""
    algo = "dflash2" if p["version"] == "v2" else "dflash"
    return {
        "architectures": [ARCH[p["version"]]],
        "speculators_model_type": algo,
        "speculators_version": "0.9.0",
        "aux_hidden_state_layer_ids": [t + 1 for t in p["taps"]],
        **drafter_fields(p),
        "draft_vocab_size": p["V"],
        "sample_from_anchor": False,
        "sliding_window_non_causal": not p["causal"],
        "target_hidden_size": p.get("target_hidden_size"),
        "tie_word_embeddings": False,
        "dtype": p["dtype"],
        "transformers_version": "5.19.0",
        "transformer_layer_config": transformer(p),
        "speculators_config": {
            "algorithm": algo,
            "default_proposal_method": "greedy",
            "proposal_methods": [
                {
                    "accept_tolerance": 0.0,
                    "proposal_type": "greedy",
                    "speculative_tokens": p["block"] - 1,
                    "verifier_accept_k": 1,
                }
            ],
            "verifier": {"architectures": ["Qwen3ForCausalLM"], "name_or_path": verifier},
        },
    }


def layout_of(config: dict[str, Any], dtype: str = "F32") -> list[tuple[str, str, tuple[int, ...]]]:
    spec, found = to_spec(config)
    assert spec is not None, found
    return [(e.name, dtype, e.shape) for e in expected_tensors(spec)]


def random_data(seed: int):
    def data(name: str, nbytes: int) -> bytes:
        return random.Random(seed ^ zlib.crc32(name.encode())).randbytes(nbytes)

    return data


def build(
    directory: Path,
    config: dict[str, Any],
    *,
    seed: int = 0,
    shards: int = 1,
    dtype: str = "F32",
    tensors: list[tuple[str, str, tuple[int, ...]]] | None = None,
) -> Path:
    return materialise(
        directory, config, tensors or layout_of(config, dtype), shards=shards, data=random_data(seed)
    )


def target_dir(
    directory: Path, layers: int = TARGET_LAYERS, vocab: int | None = None, hidden: int | None = None
) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    cfg: dict[str, Any] = {
        "architectures": ["Qwen3ForCausalLM"],
        "model_type": "qwen3",
        "num_hidden_layers": layers,
    }
    if vocab:
        cfg["vocab_size"] = vocab
    if hidden:
        cfg["hidden_size"] = hidden
    (directory / "config.json").write_text(json.dumps(cfg))
    return directory


def tensor_bytes(directory: Path) -> dict[str, tuple[str, bytes]]:
    """name -> (file, bytes) for every tensor of every .safetensors file in the directory."""
    out = {}
    for f in sorted(directory.glob("*.safetensors")):
        raw = f.read_bytes()
        (n,) = struct.unpack("<Q", raw[:8])
        header = json.loads(raw[8 : 8 + n])
        header.pop("__metadata__", None)
        for name, info in header.items():
            b, e = info["data_offsets"]
            out[name] = (f.name, raw[8 + n + b : 8 + n + e])
    return out


def tree_digest(directory: Path) -> dict[str, str]:
    return {
        str(p.relative_to(directory)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(directory.rglob("*"))
        if p.is_file()
    }


def leftovers(parent: Path) -> list[str]:
    return [p.name for p in parent.iterdir() if ".dflash2-" in p.name]


# the small v2 drafter the refusal tests vary one key at a time; p(**kw) is it with kw changed
BASE: dict[str, Any] = {
    "version": "v2",
    "H": 32,
    "I": 16,
    "layers": 2,
    "nq": 2,
    "nkv": 1,
    "hd": 8,
    "V": 40,
    "bias": False,
    "theta": 10000.0,
    "layer_types": ["sliding_attention"] * 2,
    "causal": False,
    "block": 8,
    "mask": 39,
    "taps": [1, 3],
    "dtype": "float32",
    "T": 2,
    "gs": 16,
    "R": 8,
    "K": 4,
}


def p(**kw: Any) -> dict[str, Any]:
    out = copy.deepcopy(BASE)
    out.update(kw)
    return out


# generated drafters for the round-trip properties (convert, GGUF, assistant)
@st.composite
def drafters(draw: Any) -> dict[str, Any]:
    version = draw(st.sampled_from(["v1", "v2"]))
    nkv = draw(st.sampled_from([1, 2]))
    nq = nkv * draw(st.sampled_from([1, 2]))
    H = draw(st.sampled_from([16, 32]))
    V = draw(st.sampled_from([24, 40]))
    layers = draw(st.integers(1, 3))
    causal = draw(st.booleans())
    if causal:  # the only causal drafter the flat dialect can state: every layer sliding
        types = ["sliding_attention"] * layers
    else:
        types = draw(
            st.lists(
                st.sampled_from(["sliding_attention", "full_attention"]), min_size=layers, max_size=layers
            )
        )
    block = draw(st.integers(2, 8))
    p: dict[str, Any] = {
        "version": version,
        "H": H,
        "I": draw(st.sampled_from([16, 24])),
        "layers": layers,
        "nq": nq,
        "nkv": nkv,
        "hd": 8,
        "V": V,
        "bias": draw(st.booleans()),
        "theta": draw(st.sampled_from([10000.0, 1000000, 5e5])),
        "layer_types": types,
        "causal": causal,
        "block": block,
        "mask": draw(st.integers(0, V - 1)),
        "taps": sorted(draw(st.sets(st.integers(0, TARGET_LAYERS - 1), min_size=1, max_size=3))),
        "dtype": draw(st.sampled_from(["float32", "bfloat16"])),
    }
    if version == "v2":
        p.update(
            T=draw(st.integers(1, min(3, block))),
            gs=draw(st.sampled_from([8, 16])),
            R=draw(st.sampled_from([4, 8])),
            K=draw(st.integers(1, 8)),
        )
        scales = draw(
            st.fixed_dictionaries(
                {},
                optional={
                    "input_embedding_scale": st.floats(0.1, 4.0),
                    "output_multiplier": st.floats(0.01, 2.0),
                    "final_logit_softcapping": st.one_of(st.none(), st.floats(1.0, 50.0)),
                },
            )
        )
        p["scales"] = scales
    if draw(st.booleans()):
        p["target_hidden_size"] = draw(st.sampled_from([24, 48]))
    if draw(st.booleans()):
        p["transformer_unknown"] = {
            "my_transformer_note": draw(st.sampled_from([1, "x", [1, 2], {"a": None}]))
        }
    if draw(st.booleans()):
        p["drafter_unknown"] = {"my_drafter_note": draw(st.sampled_from([0.5, "trained-on-x", {"k": [1]}]))}
    return p
