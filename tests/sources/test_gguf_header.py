"""The bounded GGUF header reader: agrees with the gguf package's reader on a valid file, refuses every
hostile variant with a HeaderError (never another exception), and reads the header region only."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest

from _kit.gguf import FIXTURES, header_of, to_gguf
from dflash2_ckpt.errors import HeaderError
from dflash2_ckpt.sources import gguf_header as G
from gguf import GGMLQuantizationType, GGUFReader, GGUFValueType


@pytest.fixture(scope="module")
def good(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return to_gguf(FIXTURES / "good" / "nested-v2", tmp_path_factory.mktemp("g") / "d.gguf")


def parse(blob: bytes) -> G.GGUFHeader:
    return G.parse_gguf_header(lambda s, n: blob[s : s + n], len(blob), "x.gguf")


def test_agrees_with_gguf_reader(good: Path) -> None:
    h = header_of(good)
    r = GGUFReader(good)
    assert [t.name for t in h.tensors] == [t.name for t in r.tensors]
    for ours, theirs in zip(h.tensors, r.tensors):
        assert ours.ne == tuple(int(d) for d in theirs.shape)
        assert ours.ggml_type == int(theirs.tensor_type)
        assert ours.begin == int(theirs.data_offset) and ours.nbytes == int(theirs.n_bytes)
    assert set(h.kv) == {k for k in r.fields if not k.startswith("GGUF.")}
    assert h.get("dflash.target_layers") == [int(v) for v in r.fields["dflash.target_layers"].contents()]
    assert h.get("tokenizer.ggml.tokens") == r.fields["tokenizer.ggml.tokens"].contents()


def test_every_truncation_is_a_header_error(good: Path) -> None:
    blob = good.read_bytes()
    end = header_of(good).header_bytes
    for cut in list(range(0, 64)) + list(range(64, end, 97)) + [end - 1]:
        with pytest.raises(HeaderError):
            parse(blob[:cut])


def _patch_u64_after(blob: bytes, marker: bytes, value: int) -> bytes:
    """Overwrite the uint64 that follows the first occurrence of marker."""
    i = blob.index(marker) + len(marker)
    return blob[:i] + struct.pack("<Q", value) + blob[i + 8 :]


@pytest.mark.parametrize(
    "mutate, needle",
    [
        (lambda b: b"GGUX" + b[4:], "not a GGUF file"),
        (lambda b: b[:4] + struct.pack(">I", 3) + b[8:], "big-endian"),
        (lambda b: b[:4] + struct.pack("<I", 99) + b[8:], "unsupported GGUF version"),
        (lambda b: b[:8] + struct.pack("<Q", 1 << 40) + b[16:], "exceed the caps"),
        (lambda b: b[:16] + struct.pack("<Q", 1 << 50) + b[24:], "exceed the caps"),
        (lambda b: b[:24] + struct.pack("<Q", 1 << 60) + b[32:], "string length"),
    ],
)
def test_absurd_counts_and_lengths(good: Path, mutate: object, needle: str) -> None:
    with pytest.raises(HeaderError, match=needle):
        parse(mutate(good.read_bytes()))  # type: ignore[operator]


def test_absurd_array_length(good: Path) -> None:
    blob = good.read_bytes()
    # the tokens array: key, type ARRAY, sub type STRING, then its uint64 count
    marker = b"tokenizer.ggml.tokens" + struct.pack("<II", GGUFValueType.ARRAY, GGUFValueType.STRING)
    with pytest.raises(HeaderError, match="exceed the cap"):
        parse(_patch_u64_after(blob, marker, 1 << 40))


def test_unknown_value_type(good: Path) -> None:
    blob = good.read_bytes()
    marker = b"dflash.block_count"
    i = blob.index(marker) + len(marker)
    with pytest.raises(HeaderError, match="unknown value type 77"):
        parse(blob[:i] + struct.pack("<I", 77) + blob[i + 4 :])


def _tensor_info_at(blob: bytes, name: str) -> int:
    """Offset of the n_dims field of a tensor info."""
    return blob.index(struct.pack("<Q", len(name)) + name.encode()) + 8 + len(name)


def test_unknown_ggml_type_and_bad_offsets(good: Path) -> None:
    blob = good.read_bytes()
    h = header_of(good)
    t = h.tensors[1]
    at = _tensor_info_at(blob, t.name) + 4 + 8 * len(t.ne)
    with pytest.raises(HeaderError, match="unknown ggml type 250"):
        parse(blob[:at] + struct.pack("<I", 250) + blob[at + 4 :])
    with pytest.raises(HeaderError, match="run past the end"):
        parse(blob[: at + 4] + struct.pack("<Q", len(blob)) + blob[at + 12 :])
    with pytest.raises(HeaderError, match="not aligned"):
        parse(blob[: at + 4] + struct.pack("<Q", t.offset + 4) + blob[at + 12 :])
    with pytest.raises(HeaderError, match="overlap"):
        parse(blob[: at + 4] + struct.pack("<Q", h.tensors[0].offset) + blob[at + 12 :])


def test_block_size_and_dims(good: Path) -> None:
    blob = good.read_bytes()
    at = _tensor_info_at(blob, "fc.weight")  # n_dims = 2, ne = (64, 32), type F32
    q8_odd = blob[: at + 4] + struct.pack("<QQI", 33, 32, GGMLQuantizationType.Q8_0) + blob[at + 24 :]
    with pytest.raises(HeaderError, match="multiple of the 32-element block"):
        parse(q8_odd)
    with pytest.raises(HeaderError, match="dimensions"):
        parse(blob[:at] + struct.pack("<I", 9) + blob[at + 4 :])


def test_duplicate_key(good: Path) -> None:
    blob = good.read_bytes()
    assert len(b"dflash.block_size") == len(b"dflash.vocab_size")
    with pytest.raises(HeaderError, match="dflash.vocab_size appears twice"):
        parse(blob.replace(b"dflash.block_size", b"dflash.vocab_size", 1))


def test_reads_grow_in_bounded_chunks_and_stop_at_the_header(good: Path) -> None:
    blob = good.read_bytes()
    calls: list[tuple[int, int]] = []

    def fetch(s: int, n: int) -> bytes:
        calls.append((s, n))
        return blob[s : s + n]

    h = G.parse_gguf_header(fetch, len(blob), "x")
    assert all(n <= max(G.MAX_CHUNK, h.header_bytes) for _, n in calls)
    fetched = sum(n for _, n in calls)
    assert h.header_bytes <= fetched < h.header_bytes + G.MAX_CHUNK
    # contiguous, never the same byte twice
    assert [s for s, _ in calls] == [sum(n for _, n in calls[:i]) for i in range(len(calls))]
