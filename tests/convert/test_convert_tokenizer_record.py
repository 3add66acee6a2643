"""convert --target records the target tokenizer's fingerprint: the config key in the HF dialects, a
dflash2_ckpt.* key in a GGUF; a drafter recorded for another tokenizer is refused."""

from __future__ import annotations

import json
from pathlib import Path

from _kit.cli import run_json, run_output
from _kit.gguf import header_of
from conftest import FIXTURES
from dflash2_ckpt.checkpoint.tokenizer import tokenizer_fingerprint
from dflash2_ckpt.formats import gguf_names as N

TINY = FIXTURES / "targets" / "tiny-target"
KEY = "dflash2_ckpt_tokenizer_sha256"
# the tiny target's tokenizer (tests/checks/test_tokenizer_pairing.py derives it from the definition)
TINY_SHA = "585e742bb9d15bf9c10663a89d2f21f572b4074bd43f9bb578b5618f822a76a8"


def test_fixture_digest_is_current() -> None:
    assert tokenizer_fingerprint(TINY) == TINY_SHA


def test_dialect_convert_records_and_carries_it(tmp_path: Path) -> None:
    code, doc = run_json(
        "convert",
        str(FIXTURES / "good" / "nested-v2"),
        "-o",
        str(tmp_path / "f"),
        "--to",
        "flat",
        "--target",
        str(TINY),
    )
    assert code == 0 and any(KEY in n for n in doc["notes"]), doc
    assert json.loads((tmp_path / "f" / "config.json").read_text())[KEY] == TINY_SHA
    # converted on without a target, the record travels with the other keys
    code, doc = run_json("convert", str(tmp_path / "f"), "-o", str(tmp_path / "n"), "--to", "nested")
    assert code == 0, doc
    assert json.loads((tmp_path / "n" / "config.json").read_text())[KEY] == TINY_SHA


def test_same_dialect_copy_says_what_changed(tmp_path: Path) -> None:
    code, doc = run_json(
        "convert",
        str(FIXTURES / "good" / "nested-v2"),
        "-o",
        str(tmp_path / "n"),
        "--to",
        "nested",
        "--target",
        str(TINY),
    )
    assert code == 0 and json.loads((tmp_path / "n" / "config.json").read_text())[KEY] == TINY_SHA
    assert not any(n.endswith("copied unchanged") for n in doc["notes"]), doc["notes"]


def test_without_target_nothing_is_recorded(tmp_path: Path) -> None:
    code, _ = run_json(
        "convert",
        str(FIXTURES / "good" / "nested-v2"),
        "-o",
        str(tmp_path / "f"),
        "--to",
        "flat",
        "--verifier-name",
        "org/tiny",
        "--verifier-arch",
        "Qwen3ForCausalLM",
    )
    assert code == 0 and KEY not in json.loads((tmp_path / "f" / "config.json").read_text())


def test_gguf_convert_records_it_and_both_forms_agree(tmp_path: Path) -> None:
    out = tmp_path / "d.gguf"
    code, doc = run_json(
        "convert", str(FIXTURES / "good" / "nested-v2"), "-o", str(out), "--to", "gguf", "--target", str(TINY)
    )
    assert code == 1 and doc["written"], doc  # written; 1 for DF907, the tiny drafter's llama.cpp limit
    assert header_of(out).get(N.KEY_TOKENIZER_SHA256) == TINY_SHA
    assert tokenizer_fingerprint(out) == TINY_SHA  # the GGUF's own token list, same vocabulary
    # --tokenizer-from copies that file's tokenizer and records its fingerprint
    again = tmp_path / "e.gguf"
    code, doc = run_json(
        "convert",
        str(FIXTURES / "good" / "flat-v2"),
        "-o",
        str(again),
        "--to",
        "gguf",
        "--tokenizer-from",
        str(out),
    )
    assert code == 1 and header_of(again).get(N.KEY_TOKENIZER_SHA256) == TINY_SHA, doc


def test_recorded_for_another_tokenizer_is_refused(tmp_path: Path) -> None:
    import shutil

    drafter = tmp_path / "d"
    shutil.copytree(FIXTURES / "good" / "nested-v2", drafter)
    cfg = json.loads((drafter / "config.json").read_text())
    (drafter / "config.json").write_text(json.dumps({**cfg, KEY: "0" * 64}))
    for to, out in (("flat", tmp_path / "f"), ("gguf", tmp_path / "x.gguf")):
        code, text = run_output("convert", str(drafter), "-o", str(out), "--to", to, "--target", str(TINY))
        assert code != 0 and "DF509" in text and not out.exists(), text


def test_padded_gguf_tokenizer_has_the_tokenizer_json_fingerprint(tmp_path: Path) -> None:
    """A tokenizer smaller than vocab_size is padded with [PAD<id>] entries in the GGUF; they are not tokens."""
    import shutil

    target = tmp_path / "t"
    shutil.copytree(TINY, target)
    doc = json.loads((target / "tokenizer.json").read_text())
    doc["model"]["vocab"] = {t: i for t, i in doc["model"]["vocab"].items() if i < 60}
    doc["model"]["merges"] = [
        m
        for m in doc["model"]["merges"]
        if "".join(m if isinstance(m, list) else m.split(" ")) in doc["model"]["vocab"]
    ]
    doc["added_tokens"] = [{**doc["added_tokens"][0], "id": 60}]
    (target / "tokenizer.json").write_text(json.dumps(doc))
    out = tmp_path / "d.gguf"
    code, report = run_json(
        "convert",
        str(FIXTURES / "good" / "nested-v2"),
        "-o",
        str(out),
        "--to",
        "gguf",
        "--target",
        str(target),
    )
    # exit 1: written, with DF907 (the tiny drafter is under llama.cpp's top-k limit)
    assert code == 1 and any("padded from 61 to vocab_size 64" in n for n in report["notes"]), report
    assert header_of(out).get("tokenizer.ggml.tokens")[61:] == ["[PAD61]", "[PAD62]", "[PAD63]"]
    assert (
        tokenizer_fingerprint(out)
        == tokenizer_fingerprint(target)
        == header_of(out).get(N.KEY_TOKENIZER_SHA256)
    )
