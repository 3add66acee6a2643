"""Prompt files: {"prompt"} and {"messages"} lines, and clear errors for anything else."""

from __future__ import annotations

from pathlib import Path

import pytest

from dflash2_ckpt.accept.prompts import BUILTIN, load_prompts, read_jsonl
from dflash2_ckpt.errors import ConfigError, SourceError

TARGET = Path(__file__).resolve().parents[2] / "fixtures" / "pairs" / "tiny" / "target"


def test_rows_and_errors(tmp_path):
    p = tmp_path / "p.jsonl"
    p.write_text('{"prompt": "ba"}\n\n{"messages": [{"role": "user", "content": "ko"}]}\n')
    assert [label for label, _ in read_jsonl(p)] == ["p.jsonl:1", "p.jsonl:3"]
    for text, match in (
        ("{", "line 1 is not JSON"),
        ('{"text": "x"}', "neither"),
        ("[1]", "neither"),
        ('{"messages": ["x"]}', "neither"),
        ("\n", "no prompt"),
    ):
        p.write_text(text)
        with pytest.raises(ConfigError, match=match):
            read_jsonl(p)
    with pytest.raises(SourceError):
        read_jsonl(tmp_path / "missing.jsonl")


@pytest.mark.skipif(not (TARGET / "tokenizer.json").is_file(), reason="tiny pair not built")
def test_encoding_with_and_without_chat_template(tmp_path):
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(str(TARGET))
    p = tmp_path / "p.jsonl"
    p.write_text('{"prompt": "ba ko"}\n{"messages": [{"role": "user", "content": "ba ko"}]}\n')
    plain, chat = load_prompts(tok, p, None)[0]
    assert plain.ids == chat.ids == tok("ba ko")["input_ids"] and plain.ids[0] == tok.bos_token_id
    got, source = load_prompts(tok, None, TARGET, limit=3)
    assert source == "target's prompts.jsonl" and len(got) == 3
    tok.chat_template = None
    with pytest.raises(ConfigError, match="chat template"):
        load_prompts(tok, p, None)
    assert all("messages" in r for r in BUILTIN)  # the built-in set is for chat models
    with pytest.raises(ConfigError, match="chat template"):
        load_prompts(tok, None, tmp_path)
