"""The target's tokenizer vocabulary and its fingerprint: which token string each id stands for.

A drafter drafts ids; two targets whose vocabularies have the same size but other tokens load the same
drafter without complaint and accept nothing. `convert --target` records the target tokenizer's fingerprint
in the drafter (config key TOKENIZER_KEY, GGUF key gguf_names.KEY_TOKENIZER_SHA256) and `verify --target`
compares it (checks/tokenizer.py).

The fingerprint (version 1) is the SHA-256 of b"dflash2-ckpt tokenizer v1\\0" followed by, for every id in
ascending order, the id as little-endian u64, the token's UTF-8 length as u32, and its UTF-8 bytes.
The ids and strings come from
- tokenizer.json: model.vocab (a {token: id} object for BPE / WordPiece / WordLevel, a [[piece, score], ...]
  list for Unigram, ids by position), then added_tokens (their `content` at their `id`, over the vocab's);
- a GGUF: tokenizer.ggml.tokens, ids by position.
An entry "[PAD<id>]" at its own id is filler past the tokenizer (the converters pad the list to vocab_size:
gguf_tokenizer.py, llama.cpp's convert_hf_to_gguf) and is not a token. So the two forms agree wherever a GGUF
stores tokenizer.json's token strings, as BPE tokenizers are converted (ours and llama.cpp's); a
SentencePiece GGUF made from tokenizer.model may spell pieces otherwise and then has its own fingerprint.
"""

from __future__ import annotations

import json
import os
import re
import struct
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..errors import HeaderError, SourceError
from ..formats.keys import TOKENIZER_KEY
from ..sources import LocalSource, Source, read_small

__all__ = ["TOKENIZER_KEY", "Vocabulary", "read_vocabulary", "tokenizer_fingerprint", "recorded"]

TOKENIZER_FILE = "tokenizer.json"
_MAGIC = b"dflash2-ckpt tokenizer v1\0"
_HEX = re.compile(r"[0-9a-f]{64}")
_SURROGATE = re.compile("[\ud800-\udfff]")


@dataclass(frozen=True)
class Vocabulary:
    """id -> token string of a tokenizer, and the file it was read from (for messages)."""

    tokens: Mapping[int, str]
    file: str

    @property
    def size(self) -> int:
        """Ids the tokenizer can produce: one past the highest."""
        return max(self.tokens, default=-1) + 1

    def fingerprint(self) -> str:
        import hashlib  # only a fingerprint pays for it (a plain convert has no tokenizer to hash)

        h = hashlib.sha256(_MAGIC)
        for i in sorted(self.tokens):
            b = self.tokens[i].encode("utf-8", errors="surrogateescape")  # a GGUF token need not be UTF-8
            h.update(struct.pack("<QI", i, len(b)))
            h.update(b)
        return h.hexdigest()


def _is_id(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and 0 <= v < 2**63


def _without_padding(tokens: dict[int, str]) -> dict[int, str]:
    return {i: t for i, t in tokens.items() if t != f"[PAD{i}]"}


def parse_tokenizer_json(raw: bytes, where: str) -> Vocabulary:
    """The vocabulary of a tokenizer.json; SourceError naming `where` when it is not one."""

    def bad(why: str) -> SourceError:
        return SourceError(f"{TOKENIZER_FILE} {why}; the tokenizer cannot be compared", path=where)

    try:
        doc = json.loads(raw)
    except (ValueError, RecursionError) as e:
        raise bad(f"is not JSON ({e})") from None
    model = doc.get("model") if isinstance(doc, dict) else None
    vocab = model.get("vocab") if isinstance(model, dict) else None
    tokens: dict[int, str] = {}
    if isinstance(vocab, dict):
        for text, i in vocab.items():
            if not _is_id(i):
                raise bad(f"maps {text!r} to {i!r}, not a token id")
            tokens[i] = text
    elif isinstance(vocab, list):  # Unigram: [[piece, score], ...]
        for i, entry in enumerate(vocab):
            if not (isinstance(entry, list) and entry and isinstance(entry[0], str)):
                raise bad(f"has model.vocab[{i}] = {str(entry)[:60]}, not a [piece, score] pair")
            tokens[i] = entry[0]
    else:
        raise bad("has no model.vocab")
    added = doc.get("added_tokens") or []
    if not isinstance(added, list):
        raise bad("has added_tokens that is not a list")
    for a in added:
        if not (isinstance(a, dict) and _is_id(a.get("id")) and isinstance(a.get("content"), str)):
            raise bad(f"has an added token {str(a)[:60]} without an id and a content")
        tokens[a["id"]] = a["content"]
    for i, text in tokens.items():
        if _SURROGATE.search(text):  # JSON's "\ud800": no UTF-8 spells it (a tokenizer refuses to load it)
            shown = text.encode("unicode_escape").decode()[:60]
            raise bad(
                f"has token {i} holding a lone surrogate ({shown}), which is not text; re-save the "
                "tokenizer with its tokenizers library"
            )
    return Vocabulary(_without_padding(tokens), TOKENIZER_FILE)


def _gguf_vocabulary(source: Source, name: str) -> Vocabulary | None:
    from ..sources.gguf_header import read_gguf_header  # lazy: sources.gguf_header loads only on this path

    try:
        header, _ = read_gguf_header(source, name)
        tokens = header.get("tokenizer.ggml.tokens")
        values = None if tokens is None else list(tokens)
    except HeaderError as e:
        raise SourceError(f"{name}: {e}; the tokenizer cannot be compared", path=source.label) from None
    if values is None:
        return None
    if not all(isinstance(t, str) for t in values):
        raise SourceError(f"{name}: tokenizer.ggml.tokens is not a list of strings", path=source.label)
    return Vocabulary(_without_padding(dict(enumerate(values))), f"{name} tokenizer.ggml.tokens")


def read_vocabulary(source: Source) -> Vocabulary | None:
    """The tokenizer of a model: a GGUF file's token list, or the directory's tokenizer.json (read under the
    JSON size cap); None when it has none; SourceError when it has one that does not read."""
    if source.file is not None and source.file.endswith(".gguf"):
        return _gguf_vocabulary(source, source.file)
    if TOKENIZER_FILE not in source.list_files():
        return None
    return parse_tokenizer_json(read_small(source, TOKENIZER_FILE), source.label)


def tokenizer_fingerprint(path_or_dir: str | os.PathLike[str] | Source) -> str | None:
    """The tokenizer fingerprint (module docstring) of a model directory's tokenizer.json or of a GGUF file's
    tokens; None when there is no tokenizer; SourceError when it is there but does not read."""
    source = LocalSource(path_or_dir) if isinstance(path_or_dir, (str, os.PathLike)) else path_or_dir
    vocab = read_vocabulary(source)
    return None if vocab is None else vocab.fingerprint()


def recorded(value: Any) -> str | None:
    """A recorded fingerprint, when the value is one (64 lower-case hex digits)."""
    return value if isinstance(value, str) and _HEX.fullmatch(value) else None
