"""verify --target against the target's tokenizer: the recorded fingerprint (DF509), and without one the
drafter's special ids and vocab_size against the tokenizer's tokens (DF510, DF501); DF511 when it does not read."""

from __future__ import annotations

import hashlib
import json
import shutil
import struct
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from _kit.cli import run_json
from conftest import FIXTURES
from dflash2_ckpt.checkpoint.tokenizer import parse_tokenizer_json, tokenizer_fingerprint

TINY = FIXTURES / "targets" / "tiny-target"
DRAFT = FIXTURES / "good" / "nested-v2"


def spec_digest(tokens: dict[int, str]) -> str:
    """The fingerprint as docs/verify.md defines it, written out independently of the package."""
    h = hashlib.sha256(b"dflash2-ckpt tokenizer v1\0")
    for i in sorted(tokens):
        b = tokens[i].encode()
        h.update(struct.pack("<QI", i, len(b)) + b)
    return h.hexdigest()


def tiny_tokens() -> dict[int, str]:
    tj = json.loads((TINY / "tokenizer.json").read_text())
    return {
        **{i: t for t, i in tj["model"]["vocab"].items()},
        **{a["id"]: a["content"] for a in tj["added_tokens"]},
    }


def target_like(d: Path, edit: Any) -> Path:
    """The tiny target with its tokenizer.json edited in place by `edit(doc)`."""
    shutil.copytree(TINY, d)
    doc = json.loads((d / "tokenizer.json").read_text())
    edit(doc)
    (d / "tokenizer.json").write_text(json.dumps(doc))
    return d


def swap_two(doc: dict[str, Any]) -> None:
    """Same size, other tokens: ids 2 and 3 trade their strings."""
    v = doc["model"]["vocab"]
    a, b = [t for t, i in v.items() if i in (2, 3)]
    v[a], v[b] = v[b], v[a]


def codes(doc: dict[str, Any]) -> list[str]:
    return [f["code"] for f in doc["findings"]]


def converted(tmp_path: Path, target: Path = TINY) -> Path:
    code, doc = run_json(
        "convert", str(DRAFT), "-o", str(tmp_path / "flat"), "--to", "flat", "--target", str(target)
    )
    assert code == 0, doc
    return tmp_path / "flat"


def test_fingerprint_follows_its_definition() -> None:
    assert tokenizer_fingerprint(TINY) == spec_digest(tiny_tokens())


def test_same_size_other_tokens_is_df509(tmp_path: Path) -> None:
    other = target_like(tmp_path / "other", swap_two)
    drafter = converted(tmp_path)
    code, doc = run_json("verify", str(drafter), "--target", str(other))
    assert code == 1 and codes(doc) == ["DF509"], doc
    f = doc["findings"][0]
    assert f["field"] == "dflash2_ckpt_tokenizer_sha256" and f["details"]["recorded"] == spec_digest(
        tiny_tokens()
    )
    # nothing else tells them apart: same config, same vocab_size, the mask token still at 63
    code, doc = run_json("verify", str(DRAFT), "--target", str(other))
    assert code == 0 and codes(doc) == []


def test_matching_tokenizer_has_no_finding(tmp_path: Path) -> None:
    code, doc = run_json("verify", str(converted(tmp_path)), "--target", str(TINY))
    assert code == 0 and codes(doc) == []  # the recorded key is ours, not an unknown one (DF116)


def test_unrecorded_mask_id_not_a_token_is_df510(tmp_path: Path) -> None:
    target = target_like(tmp_path / "t", lambda doc: doc.update(added_tokens=[]))  # no token 63
    code, doc = run_json("verify", str(DRAFT), "--target", str(target))
    assert codes(doc) == ["DF510"] and code == 0, doc  # a warning
    assert doc["findings"][0]["field"] == "dflash_config.mask_token_id"


def test_unrecorded_eos_not_a_token_is_df510(tmp_path: Path) -> None:
    def drop_eos(doc: dict[str, Any]) -> None:
        doc["model"]["vocab"] = {t: i for t, i in doc["model"]["vocab"].items() if i != 1}
        doc["model"]["merges"] = []

    code, doc = run_json("verify", str(DRAFT), "--target", str(target_like(tmp_path / "t", drop_eos)))
    assert [(f["code"], f["field"]) for f in doc["findings"]] == [("DF510", "eos_token_id")], doc


def test_tokenizer_beyond_vocab_size_is_df501(tmp_path: Path) -> None:
    target = target_like(
        tmp_path / "t",
        lambda doc: doc["added_tokens"].append({"id": 100, "content": "<|extra|>", "special": True}),
    )
    code, doc = run_json("verify", str(DRAFT), "--target", str(target))
    assert code == 1 and codes(doc) == ["DF501"], doc
    assert doc["findings"][0]["details"] == {"draft": 64, "target_tokenizer": 101}


@pytest.mark.parametrize(
    "text",
    [
        "{not json",
        '{"model": {}}',
        '{"model": {"vocab": {"a": -1}}}',
        '{"model": {"vocab": {}}, "added_tokens": [{"id": "x"}]}',
    ],
)
def test_unreadable_tokenizer_is_df511(tmp_path: Path, text: str) -> None:
    target = target_like(tmp_path / "t", lambda doc: None)
    (target / "tokenizer.json").write_text(text)
    code, doc = run_json("verify", str(DRAFT), "--target", str(target))
    assert code == 0 and codes(doc) == ["DF511"], doc
    assert "tokenizer.json" in doc["findings"][0]["message"]


def test_oversized_tokenizer_is_refused_unread(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import dflash2_ckpt.sources.local as local

    monkeypatch.setattr(local, "MAX_JSON_BYTES", 2000)  # over the configs, under tokenizer.json
    code, doc = run_json("verify", str(DRAFT), "--target", str(TINY))
    assert codes(doc) == ["DF511"] and "refused" in doc["findings"][0]["message"], doc


def test_no_tokenizer_compares_nothing(tmp_path: Path) -> None:
    target = target_like(tmp_path / "t", lambda doc: None)
    (target / "tokenizer.json").unlink()
    assert tokenizer_fingerprint(target) is None
    code, doc = run_json("verify", str(converted(tmp_path)), "--target", str(target))
    assert code == 0 and codes(doc) == []


def test_unigram_padding_and_added_tokens() -> None:
    doc = {
        "model": {"type": "Unigram", "vocab": [["<unk>", 0.0], ["\u2581a", -1.0], ["[PAD2]", 0.0]]},
        "added_tokens": [{"id": 1, "content": "<mask>"}],
    }
    v = parse_tokenizer_json(json.dumps(doc).encode(), "x")
    assert dict(v.tokens) == {0: "<unk>", 1: "<mask>"} and v.fingerprint() == spec_digest(
        {0: "<unk>", 1: "<mask>"}
    )


@settings(max_examples=60, deadline=None)
@given(
    st.dictionaries(st.text(min_size=1, max_size=6), st.integers(0, 300), min_size=1, max_size=30),
    st.randoms(use_true_random=False),
)
def test_fingerprint_is_the_vocabulary_not_its_spelling(vocab: dict[str, int], rnd: Any) -> None:
    """Key order and formatting do not change it; renaming any one token does."""
    vocab = {t: i for t, i in vocab.items() if t != f"[PAD{i}]"}
    by_id = {i: t for t, i in vocab.items()}
    vocab = {t: i for i, t in by_id.items()}  # one token per id, as a tokenizer has
    items = list(vocab.items())
    rnd.shuffle(items)
    a = parse_tokenizer_json(json.dumps({"model": {"vocab": vocab}}).encode(), "a").fingerprint()
    b = parse_tokenizer_json(
        json.dumps({"model": {"vocab": dict(items)}}, indent=1).encode(), "b"
    ).fingerprint()
    assert a == b == spec_digest(by_id)
    i = rnd.choice(sorted(by_id))
    renamed = {**by_id, i: by_id[i] + "x"}
    c = parse_tokenizer_json(
        json.dumps({"model": {"vocab": {t: k for k, t in renamed.items()}}}).encode(), "c"
    )
    assert c.fingerprint() != a
