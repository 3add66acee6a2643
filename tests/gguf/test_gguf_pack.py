"""Long metadata arrays packed once (convert/gguf_pack.py) give the very bytes the gguf package's own
writer packs, for a vocabulary from tokenizer.json and for one copied from a target GGUF; and the header
reader steps over them (LazyArray) with every length still checked."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest

import dflash2_ckpt.convert.to_gguf as T
from _kit.convert import build, flat_config, nested_config, p
from _kit.gguf import header_of, target_with_tokenizer
from dflash2_ckpt.errors import HeaderError
from dflash2_ckpt.sources import gguf_header as G
from gguf import GGUFValueType

V = 3000  # past gguf_pack.LONG and gguf_header.LAZY_MIN, so both paths run


def _unspliced(monkeypatch: pytest.MonkeyPatch) -> None:
    """The gguf package packs every array itself, element by element (the reference)."""
    monkeypatch.setattr(T, "take_long_arrays", lambda w: {})


def test_spliced_header_is_byte_identical_to_the_writers_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    src = build(tmp_path / "src", nested_config(p(V=V)), dtype="BF16")
    flat = build(tmp_path / "flat", flat_config(p(V=V)), dtype="BF16")
    target = target_with_tokenizer(tmp_path / "target", V)
    ours = T.convert_to_gguf(src, tmp_path / "ours.gguf", target=target)
    copied = T.convert_to_gguf(
        flat, tmp_path / "copied.gguf", target=None, tokenizer_from=tmp_path / "ours.gguf"
    )
    assert ours.written and copied.written
    with monkeypatch.context() as m:
        _unspliced(m)
        T.convert_to_gguf(src, tmp_path / "ref.gguf", target=target)
        T.convert_to_gguf(
            flat, tmp_path / "ref-copied.gguf", target=None, tokenizer_from=tmp_path / "ref.gguf"
        )
    assert (tmp_path / "ours.gguf").read_bytes() == (tmp_path / "ref.gguf").read_bytes()
    assert (tmp_path / "copied.gguf").read_bytes() == (tmp_path / "ref-copied.gguf").read_bytes()
    h = header_of(tmp_path / "copied.gguf")
    tokens = h.kv["tokenizer.ggml.tokens"].value
    assert isinstance(tokens, G.LazyArray) and len(tokens) == V
    assert list(tokens) == list(header_of(tmp_path / "ours.gguf").get("tokenizer.ggml.tokens"))


def _blob(strings: list[bytes], ints: list[int]) -> bytes:
    out = struct.pack("<IIQQ", 0x46554747, 3, 0, 2)
    key = b"tokenizer.ggml.tokens"
    out += (
        struct.pack("<Q", len(key))
        + key
        + struct.pack("<IIQ", GGUFValueType.ARRAY, GGUFValueType.STRING, len(strings))
    )
    out += b"".join(struct.pack("<Q", len(s)) + s for s in strings)
    key = b"tokenizer.ggml.token_type"
    out += (
        struct.pack("<Q", len(key))
        + key
        + struct.pack("<IIQ", GGUFValueType.ARRAY, GGUFValueType.INT32, len(ints))
    )
    return out + struct.pack(f"<{len(ints)}i", *ints)


def _parse(blob: bytes, lazy: bool = True) -> G.GGUFHeader:
    return G.parse_gguf_header(lambda s, n: blob[s : s + n], len(blob), "x.gguf", lazy=lazy)


def test_lazy_arrays_read_like_eager_ones() -> None:
    strings = [f"tok{i}".encode() for i in range(G.LAZY_MIN + 5)] + [b"\xff\xfe"]
    ints = list(range(-3, G.LAZY_MIN + 3))
    blob = _blob(strings, ints)
    lazy, eager = _parse(blob), _parse(blob, lazy=False)
    for key in ("tokenizer.ggml.tokens", "tokenizer.ggml.token_type"):
        assert isinstance(lazy.kv[key].value, G.LazyArray) and isinstance(eager.kv[key].value, list)
        assert len(lazy.kv[key].value) == len(eager.kv[key].value)
        assert lazy.kv[key].value == eager.kv[key].value and lazy.kv[key].value[-1] == eager.kv[key].value[-1]
    assert lazy.header_bytes == eager.header_bytes == len(blob)


def test_lazy_walk_still_caps_every_string_and_the_file_end() -> None:
    strings = [b"ab"] * (G.LAZY_MIN + 10)
    blob = bytearray(_blob(strings, [1] * (G.LAZY_MIN + 2)))
    first = blob.index(struct.pack("<Q", 2) + b"ab")
    at = first + 10 * 500  # each string is 8 + 2 bytes
    blob[at : at + 8] = struct.pack("<Q", G.MAX_STRING + 1)
    with pytest.raises(HeaderError, match="exceeds the"):
        _parse(bytes(blob))
    with pytest.raises(HeaderError, match="past the end"):
        _parse(bytes(_blob(strings, [1] * (G.LAZY_MIN + 2)))[:-100])


@pytest.mark.parametrize("piece", [7, 4096, None])
def test_lazy_walk_across_fetch_boundaries(piece: int | None) -> None:
    """Strings that straddle the fetched bytes (a 16 KiB first chunk, or a source that returns 7 bytes a
    read) are stepped over exactly: the lazy header ends where the eager one does, with the same values."""
    strings = [bytes([97 + i % 26]) * (1 + i % 37) for i in range(20_000)]
    blob = _blob(strings, [0] * 3000)

    def fetch(s: int, n: int) -> bytes:
        return blob[s : s + (n if piece is None else min(n, piece))]

    lazy = G.parse_gguf_header(fetch, len(blob), "x.gguf")
    eager = G.parse_gguf_header(fetch, len(blob), "x.gguf", lazy=False)
    assert lazy.header_bytes == eager.header_bytes == len(blob)
    assert list(lazy.kv["tokenizer.ggml.tokens"].value) == eager.kv["tokenizer.ggml.tokens"].value
