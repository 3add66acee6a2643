"""Conversions that cannot be exact are refused with the reason, and nothing is written."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from _kit.convert import build, flat_config, layout_of, leftovers, nested_config, p, target_dir
from dflash2_ckpt.convert import convert
from dflash2_ckpt.errors import ConversionError, SourceError


def nested_edit(fn: Callable[[dict[str, Any]], None], **kw: Any) -> dict[str, Any]:
    cfg = nested_config(p(**kw))
    fn(cfg)
    return cfg


def flat_edit(fn: Callable[[dict[str, Any]], None], **kw: Any) -> dict[str, Any]:
    cfg = flat_config(p(**kw))
    fn(cfg)
    return cfg


def _set(path: str, value: Any) -> Callable[[dict[str, Any]], None]:
    def fn(cfg: dict[str, Any]) -> None:
        *parents, last = path.split(".")
        d = cfg
        for k in parents:
            d = d[k]
        if value is KeyError:
            del d[last]
        else:
            d[last] = value

    return fn


def _both(*fns: Callable[[dict[str, Any]], None]) -> Callable[[dict[str, Any]], None]:
    def fn(cfg: dict[str, Any]) -> None:
        for f in fns:
            f(cfg)

    return fn


CASES = [
    # (id, config, to, message fragment)
    (
        "causal-with-full-layer",
        nested_edit(
            _both(_set("is_causal", True), _set("dflash_config.causal", True)),
            layer_types=["sliding_attention", "full_attention"],
        ),
        "flat",
        "full_attention",
    ),
    (
        "mixed-causality",
        nested_edit(
            _both(_set("is_causal", KeyError), _set("dflash_config.causal", KeyError)),
            layer_types=["sliding_attention", "full_attention"],
        ),
        "flat",
        "mixed per-layer causality",
    ),
    ("block-size-conflict", nested_edit(_set("block_size", 4)), "flat", "DF112"),
    ("no-block-size", nested_edit(_set("dflash_config.block_size", KeyError)), "flat", "block_size"),
    ("mask-conflict", nested_edit(_set("mask_token_id", 3)), "flat", "mask_token_id"),
    ("dc-key-collides", nested_edit(_set("dflash_config.draft_vocab_size", 7)), "flat", "its own field"),
    ("v1-arch-v2-keys", nested_edit(_set("architectures", ["DFlashDraftModel"])), "flat", "DF303"),
    ("reduced-draft-vocab", flat_edit(_set("draft_vocab_size", 20)), "nested", "reduced draft vocabulary"),
    (
        "tlc-has-drafter-key",
        flat_edit(_set("transformer_layer_config.is_causal", True)),
        "nested",
        "transformer_layer_config carries",
    ),
    ("dtype-conflict", flat_edit(_set("transformer_layer_config.dtype", "bfloat16")), "nested", "dtype"),
    ("flat-top-target-ids", flat_edit(_set("target_layer_ids", [0])), "nested", "target_layer_ids"),
]


@pytest.mark.parametrize("name,cfg,to,fragment", CASES, ids=[c[0] for c in CASES])
def test_refused(tmp_path: Path, name: str, cfg: dict[str, Any], to: str, fragment: str) -> None:
    src = build(tmp_path / "src", cfg, tensors=layout_of(nested_config(p())))
    with pytest.raises(ConversionError) as e:
        convert(
            src, tmp_path / "out", to=to, verifier_name="a/b", verifier_architectures=("Qwen3ForCausalLM",)
        )  # type: ignore[arg-type]
    assert fragment in str(e.value), str(e.value)
    assert not (tmp_path / "out").exists() and leftovers(tmp_path) == []


def test_flat_needs_a_verifier(tmp_path: Path) -> None:
    src = build(tmp_path / "src", nested_config(p()))
    with pytest.raises(ConversionError, match="verifier"):
        convert(src, tmp_path / "out", to="flat")
    assert not (tmp_path / "out").exists()


def test_target_that_does_not_fit(tmp_path: Path) -> None:
    src = build(tmp_path / "src", flat_config(p()))
    with pytest.raises(ConversionError, match="DF503"):
        convert(src, tmp_path / "out", to="nested", target=target_dir(tmp_path / "t", layers=3))
    with pytest.raises(ConversionError, match="DF501"):
        convert(src, tmp_path / "out", to="nested", target=target_dir(tmp_path / "t2", vocab=99))


def test_not_dflash(tmp_path: Path) -> None:
    from conftest import real_config

    src = build(
        tmp_path / "src",
        real_config("deepseek-ai_dspark_qwen3_8b_block7"),
        tensors=[("fc.weight", "F32", (4, 4))],
    )
    with pytest.raises(ConversionError, match="DSpark"):
        convert(
            src,
            tmp_path / "out",
            to="flat",
            verifier_name="a/b",
            verifier_architectures=("Qwen3ForCausalLM",),
        )


def test_v2_arch_without_v2_tensors(tmp_path: Path) -> None:
    cfg = nested_config(p())
    v1_tensors = layout_of(nested_config(p(version="v1")))
    src = build(tmp_path / "src", cfg, tensors=v1_tensors)
    with pytest.raises(ConversionError, match="DF302"):
        convert(
            src,
            tmp_path / "out",
            to="flat",
            verifier_name="a/b",
            verifier_architectures=("Qwen3ForCausalLM",),
        )


def test_unreadable_source(tmp_path: Path) -> None:
    with pytest.raises(SourceError):
        convert(
            tmp_path / "missing",
            tmp_path / "out",
            to="flat",
            verifier_name="a/b",
            verifier_architectures=("Qwen3ForCausalLM",),
        )
    src = build(tmp_path / "src", nested_config(p()))
    (src / "model.safetensors").write_bytes(b"\x10\x00")
    with pytest.raises(SourceError, match="DF603"):
        convert(
            src,
            tmp_path / "out",
            to="flat",
            verifier_name="a/b",
            verifier_architectures=("Qwen3ForCausalLM",),
        )


def test_destination_overlapping_source(tmp_path: Path) -> None:
    src = build(tmp_path / "src", nested_config(p()))
    for dst in (src, src / "inner", tmp_path):
        with pytest.raises(ConversionError, match="overlaps"):
            convert(
                src,
                dst,
                to="flat",
                verifier_name="a/b",
                verifier_architectures=("Qwen3ForCausalLM",),
                force=True,
            )
