"""GGUF metadata <-> DraftSpec: the "gguf" dialect (llama.cpp, docs/engines.md (GGUF)).

Reading: the `dflash.*` keys and the tensor infos become the same DraftSpec the HF dialects give (tap ids
are stored + 1, so they come back − 1; ne is the HF shape reversed), so every existing check runs on a GGUF
file. Writing: the metadata a DraftSpec implies, in the key order llama.cpp's converter uses.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from gguf import GGUFValueType

from ..sources.gguf_header import GGUFHeader
from . import gguf_names as N
from .spec import CausalityKeys, DraftSpec, LayerType

REQUIRED = (N.KEY_BLOCK_COUNT, N.KEY_EMBED, N.KEY_FFN, N.KEY_HEADS)
MAX_LAYERS = 4096
_INTS = frozenset(
    {
        GGUFValueType.UINT8,
        GGUFValueType.INT8,
        GGUFValueType.UINT16,
        GGUFValueType.INT16,
        GGUFValueType.UINT32,
        GGUFValueType.INT32,
        GGUFValueType.UINT64,
        GGUFValueType.INT64,
    }
)
_FLOATS = frozenset({GGUFValueType.FLOAT32, GGUFValueType.FLOAT64})


@dataclass(frozen=True)
class GGUFRead:
    spec: DraftSpec | None
    version: str | None  # "v2" when selector_top_k > 0 or conv / selector tensors exist
    bad_keys: tuple[str, ...]  # required keys absent or of the wrong type (spec is None then)
    v2_tensors: bool


def short_float(v: float) -> float:
    """A float32 key read back as the short decimal it was written from (1e-06, not 9.99999997e-07)."""
    return float(str(np.float32(v)))


def _int(h: GGUFHeader, key: str) -> int | None:
    kv = h.kv.get(key)
    if kv is None or kv.type not in _INTS:
        return None
    return int(kv.value)


def _float(h: GGUFHeader, key: str) -> float | None:
    kv = h.kv.get(key)
    if kv is None or kv.type not in _FLOATS | _INTS:
        return None
    v = float(kv.value)
    return short_float(v) if kv.type == GGUFValueType.FLOAT32 else v


def _ints(h: GGUFHeader, key: str) -> list[int] | None:
    kv = h.kv.get(key)
    if kv is None or kv.type != GGUFValueType.ARRAY or kv.sub_type not in _INTS:
        return None
    return [int(v) for v in kv.value]


def _layer_types(h: GGUFHeader, layers: int) -> tuple[LayerType | None, ...]:
    kv = h.kv.get(N.KEY_WINDOW_PATTERN)
    if kv is not None and kv.type == GGUFValueType.ARRAY and kv.sub_type == GGUFValueType.BOOL:
        flags = [bool(v) for v in kv.value]
        return tuple("sliding_attention" if f else "full_attention" for f in flags)
    period = _int(h, N.KEY_WINDOW_PATTERN)
    if period is not None:  # llama.cpp's rule: layer il slides unless il % n == n - 1 (n = 0: all slide)
        return tuple(
            "sliding_attention" if period == 0 or il % period < period - 1 else "full_attention"
            for il in range(layers)
        )
    return (None,) * layers


def _rope_scaling(h: GGUFHeader) -> dict[str, Any] | None:
    back = {v: k for k, v in N.ROPE_SCALING_NAMES.items() if k != "type"}
    out = {}
    for key, kv in h.kv.items():
        if key.startswith(N.KEY_ROPE_SCALING) and kv.type != GGUFValueType.ARRAY:
            name = key[len(N.KEY_ROPE_SCALING) :]
            value = short_float(kv.value) if kv.type == GGUFValueType.FLOAT32 else kv.value
            out[back.get(name, name)] = value
    return out or None


def has_v2_tensors(names: list[str]) -> bool:
    return any("_conv_" in n or n.startswith("selector_") for n in names)


def read_spec(h: GGUFHeader) -> GGUFRead:
    names = [t.name for t in h.tensors]
    v2_tensors = has_v2_tensors(names)
    top_k = _int(h, N.KEY_SEL_TOP_K)
    version = "v2" if (top_k or 0) > 0 or v2_tensors else "v1"
    bad = [k for k in REQUIRED if _int(h, k) is None]
    L = _int(h, N.KEY_BLOCK_COUNT) or 0
    if not 0 < L <= MAX_LAYERS:
        bad.append(N.KEY_BLOCK_COUNT)
    taps = _ints(h, N.KEY_TARGET_LAYERS)
    if taps is None or not taps:
        bad.append(N.KEY_TARGET_LAYERS)
    v2 = {f: _int(h, k) for f, k in N.V2_KEYS.items()}
    if version == "v2" and not all((v or 0) > 0 for v in v2.values()):
        bad += [N.V2_KEYS[f] for f, v in v2.items() if not (v or 0) > 0]
    if bad:
        return GGUFRead(None, version, tuple(dict.fromkeys(bad)), v2_tensors)
    assert taps is not None
    H, heads = _int(h, N.KEY_EMBED) or 0, _int(h, N.KEY_HEADS) or 0
    tensors = {t.name: t for t in h.tensors}
    fc = tensors.get("fc.weight")
    target_hidden = None
    if fc is not None and len(fc.ne) == 2 and fc.ne[0] % len(taps) == 0 and fc.ne[0] // len(taps) != H:
        target_hidden = fc.ne[0] // len(taps)
    codebook = tensors.get("selector_predecessor.weight")
    tokens = h.kv.get("tokenizer.ggml.tokens")
    vocab = (
        _int(h, N.KEY_VOCAB)
        or (codebook.ne[-1] if codebook is not None and codebook.ne else None)
        or (len(tokens.value) if tokens is not None and tokens.type == GGUFValueType.ARRAY else None)
        or 1
    )
    causal = h.get(N.KEY_CAUSAL)
    causal = causal if isinstance(causal, bool) else None
    window = _int(h, N.KEY_WINDOW)
    head_dim = _int(h, N.KEY_KEY_LEN) or (H // heads if heads else 1)
    spec = DraftSpec(
        version="v2" if version == "v2" else "v1",
        dialect="gguf",
        hidden_size=H,
        intermediate_size=_int(h, N.KEY_FFN) or 0,
        num_hidden_layers=L,
        num_attention_heads=heads,
        num_key_value_heads=_int(h, N.KEY_HEADS_KV) or heads,
        head_dim=head_dim,
        vocab_size=vocab,
        target_layer_ids=tuple(t - 1 for t in taps),
        layer_types=_layer_types(h, L),
        causality=CausalityKeys(is_causal=causal),
        rms_norm_eps=_float(h, N.KEY_EPS) or 1e-6,
        attention_bias=any(n.endswith(".attn_q.bias") for n in names),
        sliding_window=window or None,
        rope_theta=_float(h, N.KEY_ROPE_BASE) or 10000.0,
        rope_scaling=_rope_scaling(h),
        max_position_embeddings=_int(h, N.KEY_CONTEXT) or None,
        target_hidden_size=target_hidden,
        mask_token_id=_int(h, N.KEY_MASK),
        block_size=_int(h, N.KEY_BLOCK_SIZE) or None,
        input_embedding_scale=_float(h, N.KEY_EMBED_SCALE) or 1.0,
        output_multiplier=_float(h, N.KEY_LOGIT_SCALE) or 1.0,
        final_logit_softcapping=_float(h, N.KEY_SOFTCAP) or None,
        conv_kernel_size=v2["conv_kernel_size"] if version == "v2" else None,
        conv_group_size=v2["conv_group_size"] if version == "v2" else None,
        selector_rank=v2["selector_rank"] if version == "v2" else None,
        selector_top_k=v2["selector_top_k"] if version == "v2" else None,
        paths=N.SPEC_PATHS,
        # llama.cpp applies per-head sinks wherever blk.N.attn_sinks.weight exists: the GGUF declares them so
        drafter_extra=_extra(h, names, tensors),
    )
    return GGUFRead(spec, version, (), v2_tensors)


def _extra(h: GGUFHeader, names: list[str], tensors: dict[str, Any]) -> dict[str, Any]:
    """The MiMo attention keys a GGUF holds (per-head sinks wherever blk.N.attn_sinks.weight exists; V scaled
    by dflash.attention.value_scale) and a reduced draft vocabulary's size."""
    out: dict[str, Any] = {}
    if any(n.endswith(".attn_sinks.weight") for n in names):
        out["attention_sink_bias"] = True
    scale = _float(h, N.KEY_VALUE_SCALE)
    if scale is not None:
        out["attention_value_scale"] = scale
    d2t = tensors.get("d2t")
    if d2t is not None and len(d2t.ne) == 1:
        # a reduced draft vocabulary: llama.cpp takes its size from d2t (n_vocab_draft = d2t_meta->ne[0],
        # llama.cpp b11434:src/models/dflash.cpp)
        out["draft_vocab_size"] = int(d2t.ne[0])
    return out


Meta = tuple[str, Any, GGUFValueType, "GGUFValueType | None"]


def _f32(key: str, v: float) -> Meta:
    return (key, float(v), GGUFValueType.FLOAT32, None)


def _u32(key: str, v: int) -> Meta:
    return (key, int(v), GGUFValueType.UINT32, None)


def spec_metadata(spec: DraftSpec, *, context_length: int, causal: bool | None) -> list[Meta]:
    """The `dflash.*` keys and the mask id for a drafter (docs/engines.md, GGUF); `causal` None writes no
    key."""
    out: list[Meta] = [
        _u32(N.KEY_BLOCK_COUNT, spec.num_hidden_layers),
        _u32(N.KEY_CONTEXT, context_length),
        _u32(N.KEY_EMBED, spec.hidden_size),
        _u32(N.KEY_FFN, spec.intermediate_size),
        _u32(N.KEY_VOCAB, spec.vocab_size),
        _u32(N.KEY_HEADS, spec.num_attention_heads),
        _u32(N.KEY_HEADS_KV, spec.num_key_value_heads),
        _u32(N.KEY_KEY_LEN, spec.head_dim),
        _u32(N.KEY_VALUE_LEN, spec.head_dim),
        _f32(N.KEY_EPS, spec.rms_norm_eps),
        _f32(N.KEY_ROPE_BASE, spec.rope_theta),
    ]
    if causal is not None:
        out.append((N.KEY_CAUSAL, causal, GGUFValueType.BOOL, None))
    if spec.sliding_window:
        out.append(_u32(N.KEY_WINDOW, spec.sliding_window))
    if all(t is not None for t in spec.layer_types):
        out.append(
            (
                N.KEY_WINDOW_PATTERN,
                [t == "sliding_attention" for t in spec.layer_types],
                GGUFValueType.ARRAY,
                GGUFValueType.BOOL,
            )
        )
    for k, v in (spec.rope_scaling or {}).items():
        name = N.KEY_ROPE_SCALING + N.ROPE_SCALING_NAMES.get(k, k)
        if isinstance(v, str):
            out.append((name, v, GGUFValueType.STRING, None))
        elif isinstance(v, (int, float)) and not isinstance(v, bool):
            out.append(_f32(name, v) if isinstance(v, float) else _u32(name, v))
    if spec.block_size:
        out.append(_u32(N.KEY_BLOCK_SIZE, spec.block_size))
    if spec.version == "v2":
        for field, key in N.V2_KEYS.items():
            out.append(_u32(key, getattr(spec, field)))
    out.append(
        (
            N.KEY_TARGET_LAYERS,
            list(spec.aux_hidden_state_layer_ids),
            GGUFValueType.ARRAY,
            GGUFValueType.UINT32,
        )
    )
    if spec.input_embedding_scale != 1.0:
        out.append(_f32(N.KEY_EMBED_SCALE, spec.input_embedding_scale))
    if spec.output_multiplier != 1.0:
        out.append(_f32(N.KEY_LOGIT_SCALE, spec.output_multiplier))
    if spec.final_logit_softcapping:
        out.append(_f32(N.KEY_SOFTCAP, spec.final_logit_softcapping))
    if spec.mask_token_id is not None:
        out.append(_u32(N.KEY_MASK, spec.mask_token_id))
    scale = spec.drafter_extra.get("attention_value_scale")  # written whenever set, as llama.cpp's converter
    if isinstance(scale, (int, float)) and not isinstance(scale, bool):
        out.append(_f32(N.KEY_VALUE_SCALE, scale))
    return out
