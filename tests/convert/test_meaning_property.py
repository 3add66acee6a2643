"""Property: converting never changes the drafter an engine builds, unless the conversion is refused.

Random drafters of every dialect (nested, flat, the assistant export) with the keys engines read in
different ways varied on purpose (is_causal / dflash_config.causal present, absent or disagreeing, no
layer_types, block_size at the top level, num_target_layers, the MiMo V scale and sliding window) go
through `convert` to every other dialect and, for nested drafters, through GGUF and back. When convert
writes an output, the output is opened again and every engine profile's drafter (engines/meaning.py) is
compared with the one it builds from the source: no field may differ unless the difference is a repair
(the engine misread the source and reads the output as the source means it).
"""

from __future__ import annotations

import copy
import importlib.util
import json
import shutil
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from _kit.convert import build, drafters, layout_of, nested_config
from _kit.gguf import target_with_tokenizer
from conftest import FIXTURES
from dflash2_ckpt.checkpoint import open_checkpoint
from dflash2_ckpt.checks.pairing import borrow_target_vocab
from dflash2_ckpt.convert import convert
from dflash2_ckpt.convert.meaning import drafter_names, source_drafter
from dflash2_ckpt.engines import PROFILES
from dflash2_ckpt.engines.meaning import compare
from dflash2_ckpt.errors import ConversionError

_spec = importlib.util.spec_from_file_location("fixture_build", FIXTURES / "build.py")
assert _spec is not None and _spec.loader is not None
fixture_build = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(fixture_build)

SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@st.composite
def varied(draw: Any) -> tuple[str, dict[str, Any], list[Any], int]:
    """(source dialect, its config, its tensor layout, the target's vocabulary): a nested config with
    engine-sensitive keys varied."""
    p = draw(drafters())
    dialect = draw(
        st.sampled_from(["nested", "flat", "assistant"] if p["version"] == "v1" else ["nested", "flat"])
    )
    cfg = nested_config(p)
    dc = cfg["dflash_config"]
    causal = draw(st.sampled_from(["both", "none", "is_causal", "dflash", "disagree"]))
    if causal in ("none", "dflash"):
        cfg.pop("is_causal")
    if causal in ("none", "is_causal"):
        dc.pop("causal")
    if causal == "disagree":
        dc["causal"] = not cfg["is_causal"]
    if draw(st.booleans()):
        cfg.pop("num_target_layers")
    if draw(st.integers(0, 5)) == 0 and dialect != "assistant":
        cfg["block_size"] = dc.pop("block_size")  # the old nested dialect
    if draw(st.integers(0, 5)) == 0:
        dc["attention_value_scale"] = 0.5  # MiMo: vLLM and SGLang scale V
    if draw(st.integers(0, 7)) == 0 and "sliding_attention" not in cfg["layer_types"]:
        dc.update(use_swa=True, swa_window_size=8)  # MiMo: vLLM slides every layer
    layout = layout_of(nested_config(p))
    if draw(st.integers(0, 5)) == 0:
        cfg.pop("layer_types")
    if dialect == "assistant":
        return (
            dialect,
            fixture_build.assistant(cfg),
            [(fixture_build.ASSISTANT_NAMES.get(n, n), d, s) for n, d, s in layout],
            p["V"],
        )
    return dialect, cfg, layout, p["V"]


def _changed(src: Path, out: Path, target: Path) -> list[str]:
    a, b = open_checkpoint(src), open_checkpoint(out)
    borrow_target_vocab(a, json.loads((target / "config.json").read_text()))  # as convert reads the source
    result = compare(source_drafter(a), source_drafter(b), PROFILES, names=drafter_names)
    return [c.text() for c in result.changes if c.kind == "changed"]


@SETTINGS
@given(varied(), st.sampled_from(["nested", "flat", "gguf"]))
def test_conversion_never_changes_an_engines_drafter_unless_refused(
    case: tuple[str, dict[str, Any], list[Any], int], to: str
) -> None:
    dialect, cfg, layout, vocab = case
    work = Path(tempfile.mkdtemp(prefix="dflash2-meaning-"))
    try:
        target = target_with_tokenizer(work / "target", vocab)
        if dialect == "flat":
            # the flat form of the drafter, as convert writes it (if it can)
            try:
                convert(
                    build(work / "nested", copy.deepcopy(cfg), tensors=layout),
                    work / "src",
                    to="flat",
                    target=target,
                    verifier_name="tiny/target",
                )
            except ConversionError:
                return
        else:
            build(work / "src", copy.deepcopy(cfg), tensors=layout)
        src = work / "src"
        out = work / ("out.gguf" if to == "gguf" else "out")
        try:
            if to == "gguf":
                if dialect == "assistant":
                    return  # llama.cpp's converter reads the nested names; covered through nested
                from dflash2_ckpt.convert.to_gguf import convert_to_gguf

                convert_to_gguf(src, out, target=target)
            else:
                convert(src, out, to=to, target=target, verifier_name="tiny/target")  # type: ignore[arg-type]
        except ConversionError as e:
            assert not out.exists()  # refused: nothing written
            event(f"refused {dialect} -> {to}: {type(e).__name__}")
            return
        event(f"written {dialect} -> {to}")
        assert _changed(src, out, target) == [], json.dumps(cfg, default=str)
        if to == "gguf":  # and back: the GGUF read as nested again describes the source's drafter
            from dflash2_ckpt.convert.from_gguf import convert_from_gguf

            try:
                convert_from_gguf(out, work / "back", to="nested")
            except ConversionError:
                return
            assert _changed(src, work / "back", target) == []
    finally:
        shutil.rmtree(work, ignore_errors=True)
