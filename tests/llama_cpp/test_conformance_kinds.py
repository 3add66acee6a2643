"""Our `convert --to gguf` against llama.cpp's convert_hf_to_gguf.py (b11434) on every drafter kind the
fixtures have (kinds.py): v1, DFlash2 with sliding layers, attention biases, a reduced vocabulary, and the
MiMo-style window and sinks. For each kind, the differences are listed with why they are kept (JUSTIFIED,
on top of the recall drafter's table in test_conformance.py); a difference not listed fails, and so does
a listed one that no longer occurs (the table stays true). Where a converter refuses a kind, the other
must refuse it too, or the test says why not."""

from __future__ import annotations

import json

import pytest

from _kit.cli import invoke_cli
from dflash2_ckpt.cli import main

from . import kinds
from .conftest import PAIR, PAIRMOD
from .test_conformance import JUSTIFIED as COMMON
from .test_conformance import _diff

# kind -> key -> why it differs there, beyond the keys every file differs in (below)
JUSTIFIED: dict[str, dict[str, str]] = {
    "v1": {
        "general.version": "llama.cpp parses a version label out of the directory name ('v1'); informational"
    },
    "sliding": {},
    "bias": {},
    "mimo": {},
}
# keys that differ in every file, for the reasons test_conformance.JUSTIFIED gives
EVERYWHERE = {
    "dflash.vocab_size",
    "dflash2_ckpt.source.config",
    "dflash2_ckpt.tokenizer.sha256",
    "general.quantization_version",
    "general.size_label",
    "general.type",
}
# general.name: llama.cpp title-cases the directory name; equal only where that changes nothing
NAME = "general.name"
# the pattern is absent from llama.cpp's file without a sliding window (see test_conformance.JUSTIFIED)
PATTERN = "dflash.attention.sliding_window_pattern"
FULL_ATTENTION = {"v1", "bias"}

# kinds llama.cpp's converter refuses, with the line its log ends in, and ours converts: a reduced vocabulary
# (llama.cpp's converter reads no flat speculators config; ours writes output.weight and d2t as absolute
# ids, as llama.cpp's own converter does for the configs it reads: tests/convert/test_convert_gguf_reduced_vocab.py)
THEIRS_REFUSE = {"reduced": "could not find any of: ['n_layers', 'num_hidden_layers'"}


@pytest.mark.parametrize("kind", sorted(kinds.KINDS))
def test_every_kind_converts_as_llama_cpp_converts_it_or_says_why(kind, engine, ggufs, tmp_path):
    src = kinds.write(kind, tmp_path / kind)
    ours, theirs = tmp_path / "ours.gguf", tmp_path / "theirs.gguf"
    r = invoke_cli(
        main,
        [
            "convert",
            str(src),
            "--to",
            "gguf",
            "-o",
            str(ours),
            "--tokenizer-from",
            str(ggufs["target"]),
            "--format",
            "json",
        ],
    )
    try:
        PAIRMOD.llama_convert(engine, src, theirs, "--target-model-dir", str(PAIR / "target"))
        their_error = None
    except RuntimeError as e:
        their_error = str(e)
    if kind in THEIRS_REFUSE:
        assert their_error is not None and THEIRS_REFUSE[kind] in their_error, their_error
        assert r.exit_code == 0, r.output
        found = json.loads(invoke_cli(main, ["verify", str(ours), "--format", "json"]).stdout)["findings"]
        assert not [f for f in found if f["severity"] == "error"], found
        return
    assert their_error is None, their_error
    assert r.exit_code == 0, r.output
    keys, tensors = _diff(ours, theirs)
    assert tensors == []  # names, shapes, ggml types and bytes of every tensor
    expected = EVERYWHERE | set(JUSTIFIED[kind]) | ({PATTERN} if kind in FULL_ATTENTION else set())
    assert keys - {NAME} == expected, (sorted(keys - {NAME} - expected), sorted(expected - keys))
    assert all(k in COMMON or k in JUSTIFIED[kind] for k in keys)
    # what each engine-relevant key says is the same in both files
    assert not keys & {
        "dflash.attention.causal",
        "dflash.target_layers",
        "dflash.attention.sliding_window",
        "dflash.block_size",
        "tokenizer.ggml.mask_token_id",
    }


def test_the_bias_kind_converts_alike_and_compat_says_llama_cpp_refuses_it(engine, ggufs, tmp_path):
    """Both converters keep the biases; llama.cpp's loader has no bias tensors for dflash, so compat must
    not say "loads" for the file either converter writes (DF805)."""
    src = kinds.write("bias", tmp_path / "bias")
    theirs = tmp_path / "theirs.gguf"
    PAIRMOD.llama_convert(engine, src, theirs, "--target-model-dir", str(PAIR / "target"))
    doc = json.loads(
        invoke_cli(main, ["compat", str(theirs), "--engine", "llama.cpp", "--format", "json"]).output
    )
    assert {e["verdict"] for e in doc["engines"]} == {"fails"}
    assert all("DF805" in {r["code"] for r in e["reasons"]} for e in doc["engines"])
