"""The target's tokenizer as GGUF `tokenizer.ggml.*` keys: from its tokenizer.json / tokenizer_config.json
(through the gguf package's BpeVocab and SpecialVocab) or copied from a GGUF of the target.

A drafter drafts in the target's vocabulary, so llama.cpp wants the target's full tokenizer in the drafter
file (docs/engines.md, GGUF). The mask token is the drafter's own and is written by the caller, never
taken from
the target (a donor's mask id overriding the drafter's is a known drift, PrismML#127).
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from gguf.vocab import BpeVocab, SpecialVocab

from gguf import GGUFValueType, GGUFWriter, TokenType

from ..errors import ConversionError
from ..formats.gguf_names import KEY_MASK
from ..sources import LocalSource
from ..sources.gguf_header import LazyArray, read_gguf_header
from .gguf_pack import RawArray

# SpecialVocab's types, minus "mask": the target's mask token is not the drafter's
_SPECIAL = ("bos", "eos", "unk", "sep", "pad", "cls")


@contextmanager
def _quiet() -> Iterator[None]:
    """The gguf package logs every key and special token it adds; the library never prints."""
    log = logging.getLogger("gguf")
    level = log.level
    log.setLevel(logging.ERROR)
    try:
        yield
    finally:
        log.setLevel(level)


def from_target_dir(writer: GGUFWriter, target: Path, vocab_size: int, model_type: str | None) -> list[str]:
    """Add the tokenizer of a HF target directory; returns notes."""
    with _quiet():
        return _from_target_dir(writer, target, vocab_size, model_type)


def _from_target_dir(writer: GGUFWriter, target: Path, vocab_size: int, model_type: str | None) -> list[str]:
    try:
        vocab = BpeVocab(target)
    except FileNotFoundError:
        raise ConversionError(
            f"{target} has no GPT-2 style BPE tokenizer.json (or vocab.json)",
            hint="pass --tokenizer-from TARGET.gguf to copy the tokenizer of a target GGUF",
        ) from None
    except (ValueError, KeyError, TypeError) as e:
        raise ConversionError(f"{target}/tokenizer.json cannot be read as a BPE vocabulary: {e}") from None
    tokens: list[bytes] = []
    types: list[int] = []
    for text, _score, kind in vocab.all_tokens():
        tokens.append(text)
        types.append(int(kind))
    if len(tokens) > vocab_size:
        raise ConversionError(
            f"the target's tokenizer has {len(tokens)} tokens but the drafter's vocab_size is {vocab_size}",
            hint="pass the target the drafter was trained for",
        )
    notes = []
    if (
        len(tokens) < vocab_size
    ):  # the embedding is padded past the tokenizer; llama.cpp wants one entry per row
        notes.append(f"tokenizer padded from {len(tokens)} to vocab_size {vocab_size} with [PAD] tokens")
        for i in range(len(tokens), vocab_size):
            tokens.append(f"[PAD{i}]".encode())
            types.append(int(TokenType.UNUSED))
    writer.add_tokenizer_model("gpt2")
    pre = "qwen2" if (model_type or "").startswith("qwen") else "default"
    if pre == "default":
        notes.append(f"tokenizer.ggml.pre = default: no pre-tokenizer known for model_type {model_type!r}")
    writer.add_tokenizer_pre(pre)
    writer.add_token_list(tokens)
    writer.add_token_types(types)
    SpecialVocab(target, load_merges=True, special_token_types=_SPECIAL, n_vocab=vocab_size).add_to_gguf(
        writer, quiet=True
    )
    return notes


def from_gguf(writer: GGUFWriter, path: Path, vocab_size: int) -> list[str]:
    """Copy every tokenizer.* key of a target GGUF except the mask id; returns notes."""
    source = LocalSource(path)
    header, _ = read_gguf_header(source, path.name)
    tokens = header.kv.get("tokenizer.ggml.tokens")
    if tokens is None:
        raise ConversionError(f"{path} has no tokenizer.ggml.tokens to copy")
    if len(tokens.value) != vocab_size:
        raise ConversionError(
            f"{path} has {len(tokens.value)} tokens but the drafter's vocab_size is {vocab_size}",
            hint="copy the tokenizer of the target the drafter was trained for",
        )
    copied = 0
    for key, kv in header.kv.items():
        if not key.startswith("tokenizer.") or key == KEY_MASK:
            continue
        value: Any = kv.value
        if isinstance(value, LazyArray):  # the file's own bytes, spliced into the header (gguf_pack.py)
            value = RawArray(value.packed(), value.sub, value)
        elif kv.type == GGUFValueType.STRING or kv.sub_type == GGUFValueType.STRING:
            value = _encode(value)
        writer.add_key_value(key, value, kv.type, sub_type=kv.sub_type)
        copied += 1
    return [f"copied {copied} tokenizer key(s) from {path.name}"]


def _encode(value: Any) -> Any:
    """Strings back to the bytes they were read from (a token need not be valid UTF-8)."""
    if isinstance(value, list):
        return [v.encode("utf-8", errors="surrogateescape") for v in value]
    return value.encode("utf-8", errors="surrogateescape")
