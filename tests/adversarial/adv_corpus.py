#!/usr/bin/env python3
"""The adversarial corpus: one hostile checkpoint per class, each with the finding it must produce.

Nothing here is committed as data: every case is a small builder that writes its checkpoint into a
directory (large files are sparse), so the table below *is* the corpus. The tests build each case into
tmp_path; `python tests/adversarial/adv_corpus.py OUTDIR` writes them all to disk for manual poking.

A case names the finding code it must produce, a regex its message must match, the exit code of
`dflash2-ckpt verify` (1 for error findings; warnings need --strict), and whether it is an
allocation / hang bomb that must run in a subprocess under a memory and time limit.
"""

from __future__ import annotations

import json
import os
import shutil
import struct
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
GOOD = ROOT / "fixtures" / "good"


@dataclass(frozen=True)
class Case:
    id: str
    build: Callable[[Path], Path]  # writes the case under the given dir, returns the checkpoint dir
    code: str  # the finding it must produce
    match: str = ""  # regex the message of that finding must match
    exit: int = 1
    bomb: bool = False  # run in a subprocess under RLIMIT_AS and a timeout
    args: tuple[str, ...] = ()  # extra CLI arguments
    extra: dict[str, Any] = field(default_factory=dict)


def good(tmp: Path, name: str = "nested-v2") -> Path:
    d = tmp / "ckpt"
    shutil.copytree(GOOD / name, d)
    return d


# ---------------------------------------------------------------- safetensors headers


def st_bytes(
    header: dict[str, Any] | bytes, data: int = 0, *, length: int | None = None, tail: bytes = b""
) -> bytes:
    raw = header if isinstance(header, bytes) else json.dumps(header).encode()
    return struct.pack("<Q", len(raw) if length is None else length) + raw + bytes(data) + tail


def f32(n: int, begin: int = 0) -> dict[str, Any]:
    return {"dtype": "F32", "shape": [n], "data_offsets": [begin, begin + 4 * n]}


def with_weights(blob: bytes | Callable[[Path], None]) -> Callable[[Path], Path]:
    """The good nested-v2 config beside a hostile model.safetensors."""

    def build(tmp: Path) -> Path:
        d = good(tmp)
        if callable(blob):
            blob(d / "model.safetensors")
        else:
            (d / "model.safetensors").write_bytes(blob)
        return d

    return build


def _sparse(size: int, prefix: bytes) -> Callable[[Path], None]:
    def write(p: Path) -> None:
        with open(p, "wb") as f:
            f.write(prefix)
            f.truncate(size)

    return write


ONE = {"a": f32(16)}
SAFETENSORS = [
    Case("st-empty-file", with_weights(b""), "DF603", "shorter than the 8-byte"),
    Case("st-truncated-prefix", with_weights(b"\x40\x00\x00"), "DF603", "shorter than the 8-byte"),
    Case(
        "st-truncated-data",
        with_weights(st_bytes(ONE, 10)),
        "DF603",
        "need 64 data bytes but the file holds 10",
    ),
    Case(
        "st-header-len-beyond-file",
        with_weights(st_bytes(ONE, 64, length=5000)),
        "DF603",
        "runs past the end",
    ),
    Case(
        "st-header-len-absurd",
        with_weights(st_bytes(ONE, 64, length=2**64 - 1)),
        "DF603",
        "exceeds the .*cap",
        bomb=True,
    ),
    Case(
        "st-header-len-under-cap",
        with_weights(st_bytes(ONE, 64, length=99_999_999)),
        "DF603",
        "runs past the end",
        bomb=True,
    ),
    # a 120 MB sparse file whose header claims 110 MB: over the cap, so it is never read
    Case(
        "st-header-len-over-cap-sparse",
        with_weights(_sparse(120_000_000, struct.pack("<Q", 110_000_000))),
        "DF603",
        "exceeds the .*cap",
        bomb=True,
    ),
    Case("st-header-len-zero", with_weights(st_bytes(b"", 0, length=0)), "DF603", "too short"),
    Case("st-header-not-json", with_weights(st_bytes(b"{not json}  ")), "DF603", "not valid JSON"),
    Case("st-header-not-utf8", with_weights(st_bytes(b'{"\xff\xfe": 1}')), "DF603", "not UTF-8"),
    Case("st-header-not-object", with_weights(st_bytes(b"[1, 2, 3]")), "DF603", "JSON list, not an object"),
    Case("st-header-nan-literal", with_weights(st_bytes(b'{"a": NaN}')), "DF603", "not valid JSON"),
    Case(
        "st-header-deep",
        with_weights(st_bytes(b"[" * 200_000 + b"]" * 200_000)),
        "DF603",
        "not valid JSON",
        bomb=True,
    ),
    Case(
        "st-duplicate-tensor",
        with_weights(
            st_bytes(b'{"a": %s, "a": %s}' % (json.dumps(f32(16)).encode(), json.dumps(f32(16)).encode()), 64)
        ),
        "DF603",
        "duplicate key 'a'",
    ),
    Case(
        "st-duplicate-metadata-key",
        with_weights(
            st_bytes(b'{"__metadata__": {"k": "1", "k": "2"}, "a": %s}' % json.dumps(f32(16)).encode(), 64)
        ),
        "DF603",
        "duplicate key 'k'",
    ),
    Case(
        "st-offsets-overlap",
        with_weights(st_bytes({"a": f32(16), "b": f32(16, 32)}, 96)),
        "DF603",
        "overlaps",
    ),
    Case(
        "st-offsets-out-of-range",
        with_weights(st_bytes({"a": f32(16), "b": f32(16, 64)}, 64)),
        "DF603",
        "need 128 data bytes but the file holds 64",
    ),
    Case(
        "st-offsets-negative",
        with_weights(st_bytes({"a": {"dtype": "F32", "shape": [16], "data_offsets": [-64, 0]}}, 64)),
        "DF603",
        "data_offsets",
    ),
    Case(
        "st-offsets-reversed",
        with_weights(st_bytes({"a": {"dtype": "F32", "shape": [16], "data_offsets": [64, 0]}}, 64)),
        "DF603",
        "data_offsets",
    ),
    Case(
        "st-offsets-gap", with_weights(st_bytes({"a": f32(16), "b": f32(16, 128)}, 192)), "DF603", "gap of 64"
    ),
    Case("st-offsets-not-from-zero", with_weights(st_bytes({"a": f32(16, 8)}, 72)), "DF603", "gap of 8"),
    Case(
        "st-offsets-floats",
        with_weights(st_bytes({"a": {"dtype": "F32", "shape": [16], "data_offsets": [0.0, 64.0]}}, 64)),
        "DF603",
        "data_offsets",
    ),
    Case(
        "st-offsets-arity",
        with_weights(st_bytes({"a": {"dtype": "F32", "shape": [16], "data_offsets": [0, 32, 64]}}, 64)),
        "DF603",
        "data_offsets",
    ),
    Case(
        "st-dtype-unknown",
        with_weights(st_bytes({"a": {**f32(16), "dtype": "F33"}}, 64)),
        "DF603",
        "unknown dtype 'F33'",
    ),
    Case(
        "st-dtype-not-string",
        with_weights(st_bytes({"a": {**f32(16), "dtype": ["F32"]}}, 64)),
        "DF603",
        r"unknown dtype \['F32'\]",
    ),
    Case(
        "st-dtype-missing",
        with_weights(st_bytes({"a": {"shape": [16], "data_offsets": [0, 64]}}, 64)),
        "DF603",
        "unknown dtype None",
    ),
    Case(
        "st-shape-negative",
        with_weights(st_bytes({"a": {**f32(16), "shape": [-1, -16]}}, 64)),
        "DF603",
        "not a list of non-negative integers",
    ),
    Case(
        "st-shape-not-list",
        with_weights(st_bytes({"a": {**f32(16), "shape": "16"}}, 64)),
        "DF603",
        "not a list of non-negative integers",
    ),
    # 2**62 cubed elements: the reader must refuse it without computing anything of that size
    Case(
        "st-shape-overflow",
        with_weights(st_bytes({"a": {"dtype": "F32", "shape": [2**62] * 64, "data_offsets": [0, 64]}}, 64)),
        "DF603",
        "needs .* bytes",
        bomb=True,
    ),
    Case(
        "st-shape-huge-digits",
        with_weights(
            st_bytes(b'{"a": {"dtype": "F32", "shape": [1%s], "data_offsets": [0, 64]}}' % (b"0" * 5000), 64)
        ),
        "DF603",
        "not valid JSON",
    ),
    Case(
        "st-bytes-mismatch",
        with_weights(st_bytes({"a": {**f32(16), "data_offsets": [0, 60]}}, 60)),
        "DF603",
        "needs 64 bytes but data_offsets span 60",
    ),
    Case(
        "st-subbyte-mismatch",
        with_weights(st_bytes({"a": {"dtype": "F4", "shape": [3], "data_offsets": [0, 2]}}, 2)),
        "DF603",
        "needs 1.5 bytes",
    ),
    Case(
        "st-metadata-list",
        with_weights(st_bytes({"__metadata__": ["x"], "a": f32(16)}, 64)),
        "DF603",
        "__metadata__ is not a map",
    ),
    Case(
        "st-metadata-values-not-str",
        with_weights(st_bytes({"__metadata__": {"k": 1}, "a": f32(16)}, 64)),
        "DF603",
        "__metadata__ is not a map",
    ),
    Case("st-entry-not-object", with_weights(st_bytes({"a": 5}, 0)), "DF603", "entry is not an object"),
    Case(
        "st-trailing-garbage",
        with_weights(st_bytes(ONE, 64, tail=b"GARBAGE!")),
        "DF603",
        "8 bytes after the last tensor",
    ),
]


# ---------------------------------------------------------------- config.json


def with_config(
    content: bytes | Callable[[dict[str, Any]], Any] | Callable[[Path], None],
    base: str = "nested-v2",
    raw_writer: bool = False,
) -> Callable[[Path], Path]:
    """The good weights beside a hostile config.json (bytes, an edit of the good dict, or a writer)."""

    def build(tmp: Path) -> Path:
        d = good(tmp, base)
        p = d / "config.json"
        if isinstance(content, bytes):
            p.write_bytes(content)
        elif raw_writer:
            content(p)  # type: ignore[arg-type, call-arg]
        else:
            cfg = json.loads(p.read_text())
            content(cfg)  # type: ignore[arg-type, call-arg]
            p.write_text(json.dumps(cfg, indent=1))
        return d

    return build


def _set(path: str, value: Any) -> Callable[[dict[str, Any]], None]:
    def edit(cfg: dict[str, Any]) -> None:
        *parents, last = path.split(".")
        node = cfg
        for k in parents:
            node = node[k]
        node[last] = value

    return edit


def _literal(path: str, literal: str) -> bytes:
    """The good config with one value replaced by a raw JSON token (NaN, a 5000-digit integer, ...)."""
    cfg = json.loads((GOOD / "nested-v2" / "config.json").read_text())
    _set(path, "@@TOKEN@@")(cfg)
    return json.dumps(cfg).replace('"@@TOKEN@@"', literal).encode()


GOOD_TEXT = (GOOD / "nested-v2" / "config.json").read_bytes()
CONFIG = [
    Case(
        "cfg-not-json", with_config(b'{"architectures": ["DFlash2DraftModel"], '), "DF100", "not valid JSON"
    ),
    Case("cfg-empty", with_config(b""), "DF100", "not valid JSON"),
    Case("cfg-not-utf8", with_config(b'{"a\xff": 1}'), "DF100", "not UTF-8"),
    Case("cfg-array", with_config(b"[1, 2]"), "DF100", "JSON list, not an object"),
    Case("cfg-null", with_config(b"null"), "DF100", "JSON NoneType, not an object"),
    Case(
        "cfg-duplicate-key",
        with_config(GOOD_TEXT.rstrip()[:-1] + b', "hidden_size": 64}'),
        "DF117",
        "repeats the key 'hidden_size'",
    ),
    Case(
        "cfg-duplicate-nested-key",
        with_config(_literal("dflash_config.block_size", '8, "block_size": 4')),
        "DF117",
        "repeats the key 'block_size'",
    ),
    Case("cfg-nan", with_config(_literal("dflash_config.block_size", "NaN")), "DF100", "NaN / Infinity"),
    Case("cfg-infinity", with_config(_literal("rms_norm_eps", "Infinity")), "DF100", "NaN / Infinity"),
    Case(
        "cfg-neg-infinity",
        with_config(_literal("dflash_config.output_multiplier", "-Infinity")),
        "DF100",
        "NaN / Infinity",
    ),
    Case(
        "cfg-huge-int-digits",
        with_config(_literal("hidden_size", "1" + "0" * 5000)),
        "DF100",
        "not valid JSON",
    ),
    Case("cfg-huge-float", with_config(_literal("rms_norm_eps", "1e999")), "DF101", "rms_norm_eps"),
    Case(
        "cfg-huge-layers",
        with_config(_set("num_hidden_layers", 10**12)),
        "DF101",
        "num_hidden_layers",
        bomb=True,
    ),
    Case(
        "cfg-huge-layers-flat",
        with_config(_set("transformer_layer_config.num_hidden_layers", 2**63), "flat-v2"),
        "DF101",
        "transformer_layer_config.num_hidden_layers",
        bomb=True,
    ),
    Case("cfg-huge-hidden", with_config(_set("hidden_size", 10**30)), "DF101", "hidden_size = .*64-bit"),
    Case(
        "cfg-huge-block",
        with_config(_set("dflash_config.block_size", 2**64)),
        "DF101",
        "dflash_config.block_size = .*64-bit",
    ),
    Case(
        "cfg-huge-negative",
        with_config(_set("dflash_config.target_layer_ids", [0, -(2**70)])),
        "DF101",
        r"target_layer_ids\[1\] = .*64-bit",
    ),
    Case(
        "cfg-deep-nesting",
        with_config(_literal("rope_scaling", "[" * 100_000 + "]" * 100_000)),
        "DF100",
        "nested too deeply",
        bomb=True,
    ),
    Case(
        "cfg-deep-known-field",
        with_config(_literal("rope_scaling", '{"a":' * 500 + "1" + "}" * 500)),
        "",
        exit=0,
    ),
    # 100 MB (sparse): over the 64 MiB cap, so it must be refused without being read
    Case(
        "cfg-100mb",
        with_config(_sparse(100_000_000, b'{"x": "'), raw_writer=True),
        "DF100",
        "over 67108864 bytes is refused",
        bomb=True,
    ),
    Case("cfg-missing", lambda tmp: _unlink(good(tmp), "config.json"), "DF100", "no config.json"),
    Case("cfg-fifo", lambda tmp: _fifo(good(tmp), "config.json"), "DF100", "not a regular file", bomb=True),
]


def _unlink(d: Path, name: str) -> Path:
    (d / name).unlink()
    return d


def _fifo(d: Path, name: str) -> Path:
    (d / name).unlink(missing_ok=True)
    os.mkfifo(d / name)  # opening it would block forever: the reader must never open it
    return d


# ---------------------------------------------------------------- index and shards


def sharded(tmp: Path, edit: Callable[[dict[str, Any], Path], None] | None = None) -> Path:
    """The good nested-v2 weights split into two shards with an index; `edit(index, dir)` makes it hostile."""
    from dflash2_ckpt.checkpoint import Checkpoint, read_header
    from dflash2_ckpt.dev.synth import write_sharded
    from dflash2_ckpt.sources import LocalSource

    d = good(tmp)
    ck = Checkpoint(LocalSource(d))
    h = read_header(ck, "model.safetensors")
    blob = (d / "model.safetensors").read_bytes()
    spec = [(t.name, t.dtype, t.shape) for t in h.tensors]
    data = {t.name: blob[t.begin : t.end] for t in h.tensors}
    (d / "model.safetensors").unlink()
    write_sharded(d, spec, 2, lambda name, n: data[name])
    if edit is not None:
        p = d / "model.safetensors.index.json"
        index = json.loads(p.read_text())
        edit(index, d)
        p.write_text(json.dumps(index))
    return d


SHARD1, SHARD2 = "model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors"


def _remap(new: str, prep: Callable[[Path], None] | None = None) -> Callable[[Path], Path]:
    """Point every tensor of shard 1 at `new` (after `prep(dir)` set up whatever it names)."""

    def build(tmp: Path) -> Path:
        def edit(index: dict[str, Any], d: Path) -> None:
            if prep is not None:
                prep(d)
            index["weight_map"] = {k: (new if v == SHARD1 else v) for k, v in index["weight_map"].items()}

        return sharded(tmp, edit)

    return build


def _outside_fifo(d: Path) -> None:
    os.mkfifo(d.parent / "outside.fifo")


def _outside_copy(d: Path) -> None:
    shutil.copy(d / SHARD1, d.parent / "outside.safetensors")


def _link_out(d: Path) -> None:
    os.mkfifo(d.parent / "outside.fifo")
    os.symlink(d.parent / "outside.fifo", d / "linked.safetensors")


def _link_single(tmp: Path) -> Path:
    d = good(tmp)
    (d / "model.safetensors").rename(tmp / "real.safetensors")
    os.symlink(tmp / "real.safetensors", d / "model.safetensors")
    return d


def _dup_tensor(index: dict[str, Any], d: Path) -> None:
    # shard 2 also carries fc.weight (rewritten with it appended), and the index keeps one owner
    from dflash2_ckpt.checkpoint import Checkpoint, read_header
    from dflash2_ckpt.dev.synth import write_safetensors
    from dflash2_ckpt.sources import LocalSource

    h = read_header(Checkpoint(LocalSource(d)), SHARD2)
    blob = (d / SHARD2).read_bytes()
    spec = [(t.name, t.dtype, t.shape) for t in h.tensors] + [("fc.weight", "F32", (32, 64))]
    data = {t.name: blob[t.begin : t.end] for t in h.tensors}
    write_safetensors(d / SHARD2, spec, lambda name, n: data.get(name, bytes(n)))


INDEX = [
    Case("idx-absolute-shard", _remap("/nonexistent/abs.safetensors"), "DF607", "absolute path"),
    Case(
        "idx-absolute-fifo",
        lambda tmp: _remap(str(tmp / "outside.fifo"), _outside_fifo)(tmp),
        "DF607",
        "absolute path",
        bomb=True,
    ),
    Case("idx-dotdot-shard", _remap("../outside.safetensors", _outside_copy), "DF607", "climbs out"),
    Case("idx-dotdot-nested", _remap("sub/../../outside.safetensors", _outside_copy), "DF607", "climbs out"),
    Case("idx-backslash-dotdot", _remap("..\\outside.safetensors", _outside_copy), "DF607", "climbs out"),
    Case("idx-nul-byte", _remap("model\x00.safetensors"), "DF607", "climbs out"),
    Case(
        "idx-symlink-out",
        _remap("linked.safetensors", _link_out),
        "DF607",
        "leaves the checkpoint",
        bomb=True,
    ),
    Case("single-symlink-out", _link_single, "DF607", "leaves the checkpoint"),
    Case("idx-shard-missing", _remap("model-00003-of-00002.safetensors"), "DF604", "file is not there"),
    Case(
        "idx-shard-is-fifo",
        _remap("pipe.safetensors", lambda d: os.mkfifo(d / "pipe.safetensors")),
        "DF603",
        "shorter than the 8-byte",
        bomb=True,
    ),
    Case(
        "idx-shard-is-dir",
        _remap("dir.safetensors", lambda d: (d / "dir.safetensors").mkdir()),
        "DF603",
        "not a regular file",
    ),
    Case("idx-tensor-in-two-shards", lambda tmp: sharded(tmp, _dup_tensor), "DF605", "fc.weight is in both"),
    Case(
        "idx-disagrees",
        lambda tmp: sharded(tmp, lambda i, d: i["weight_map"].update({"fc.weight": SHARD2})),
        "DF606",
        "maps fc.weight to .*00002.* but it is in",
    ),
    Case(
        "idx-names-absent-tensor",
        lambda tmp: sharded(tmp, lambda i, d: i["weight_map"].update({"ghost": SHARD1})),
        "DF606",
        "maps ghost to .* but no shard holds it",
    ),
    Case(
        "idx-omits-tensor",
        lambda tmp: sharded(tmp, lambda i, d: i["weight_map"].pop("norm.weight")),
        "DF606",
        "norm.weight is in .* but not in",
    ),
    Case(
        "idx-not-json",
        lambda tmp: _write(sharded(tmp), "model.safetensors.index.json", b"{"),
        "DF608",
        "not a valid index",
    ),
    Case(
        "idx-weight-map-list",
        lambda tmp: sharded(tmp, lambda i, d: i.update(weight_map=[1])),
        "DF608",
        "no weight_map",
    ),
    Case(
        "idx-weight-map-values",
        lambda tmp: sharded(tmp, lambda i, d: i["weight_map"].update({"x": 5})),
        "DF608",
        "no weight_map",
    ),
    Case(
        "idx-duplicate-key", lambda tmp: _dup_index_key(sharded(tmp)), "DF117", "repeats the key 'fc.weight'"
    ),
    Case(
        "idx-100mb",
        lambda tmp: _sparse_file(sharded(tmp), "model.safetensors.index.json", 100_000_000),
        "DF608",
        "is refused",
        bomb=True,
    ),
]


def _write(d: Path, name: str, content: bytes) -> Path:
    (d / name).write_bytes(content)
    return d


def _sparse_file(d: Path, name: str, size: int) -> Path:
    _sparse(size, b'{"weight_map": {"')(d / name)
    return d


def _dup_index_key(d: Path) -> Path:
    p = d / "model.safetensors.index.json"
    # the first of the two fc.weight entries is wrong; JSON readers keep the last and never say so
    p.write_text(p.read_text().replace('"weight_map": {', f'"weight_map": {{"fc.weight": "{SHARD2}", ', 1))
    return d


# ---------------------------------------------------------------- pickles


def pickle_bomb(marker: Path) -> bytes:
    """Protocol-0 pickle whose loading calls builtins.open(marker, 'w'): the file appears iff unpickled."""
    return b"cbuiltins\nopen\n(V%s\nVw\ntR." % str(marker).encode()


PICKLE_NAMES = ("pytorch_model.bin", "model.pt", "mask_embedding.pt", "training_args.bin")


def _pickles(tmp: Path, keep_weights: bool = True) -> Path:
    d = good(tmp)
    for name in PICKLE_NAMES:
        (d / name).write_bytes(pickle_bomb(tmp / f"UNPICKLED-{name}"))
    if not keep_weights:
        (d / "model.safetensors").unlink()
    return d


PICKLES = [
    Case("pickle-beside-weights", _pickles, "DF602", "pickle file; it was not loaded", args=("--strict",)),
    Case("pickle-beside-weights-lenient", _pickles, "DF602", "pickle file", exit=0),
    Case("pickle-only", lambda tmp: _pickles(tmp, keep_weights=False), "DF602", "pickle file"),
]

ALL = SAFETENSORS + CONFIG + INDEX + PICKLES


def main(out: str) -> None:
    root = Path(out)
    for case in ALL:
        d = root / case.id
        d.mkdir(parents=True, exist_ok=False)
        case.build(d)
        print(f"{case.id:32} {case.code or '-':6} exit {case.exit}")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "adversarial-corpus")
