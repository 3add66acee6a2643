"""Fuzz the config parsers and every check behind them, end to end, in memory.

Seeds are the four good fixture configs and the published configs under fixtures/real/. Each input
goes through load_config -> detect -> to_spec -> spec_rules and then the whole of verify() over an
in-memory checkpoint (the good weights beside the mutated config), and the report is rendered in every
format into a strict UTF-8 stream, as a terminal or file writes it (a StringIO takes a lone surrogate a
real stream refuses). A finding is the only acceptable outcome; an exception is a bug.
"""

from __future__ import annotations

import copy
import io
import json
from pathlib import Path
from typing import Any

from fuzzkit import fuzz
from hypothesis import given
from hypothesis import strategies as st

from dflash2_ckpt.checks.config import spec_rules
from dflash2_ckpt.errors import Dflash2Error
from dflash2_ckpt.formats.detect import detect
from dflash2_ckpt.formats.parse import load_config, to_spec
from dflash2_ckpt.report import FORMATS, render, render_json
from dflash2_ckpt.sources import SourceBase
from dflash2_ckpt.usecases.verify import verify

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
SEEDS: dict[str, bytes] = {
    p.parent.name: p.read_bytes() for p in sorted((FIXTURES / "good").glob("*/config.json"))
}
SEEDS.update({p.name: p.read_bytes() for p in sorted((FIXTURES / "real").glob("*.config.json"))})
WEIGHTS = (FIXTURES / "good" / "nested-v2" / "model.safetensors").read_bytes()


class MemoryCheckpoint(SourceBase):
    """A Source over in-memory files: fuzzing verify() without touching the disk."""

    label = "memory"

    def __init__(self, files: dict[str, bytes]) -> None:
        self.files = files

    def list_files(self) -> list[str]:
        return sorted(self.files)

    def file_size(self, name: str) -> int:
        if name not in self.files:
            raise Dflash2Error(f"no {name}")
        return len(self.files[name])

    def read_range(self, name: str, start: int, length: int) -> bytes:
        return self.files[name][start : start + length]

    def local_path(self, name: str) -> Any:
        return None


def run_all(raw: bytes, scan: bool = False) -> None:
    cfg, _ = load_config(raw)
    if cfg is not None:
        det = detect(cfg)
        spec, _ = to_spec(cfg, det)
        if spec is not None:
            spec_rules(spec, cfg)
    try:
        report = verify(MemoryCheckpoint({"config.json": raw, "model.safetensors": WEIGHTS}), scan=scan)
    except Dflash2Error:
        return
    json.loads(render_json(report))
    for fmt in FORMATS:
        # what stdout or an --output file is: UTF-8, strict
        render(report, fmt, io.TextIOWrapper(io.BytesIO(), encoding="utf-8", errors="strict"))


# -- JSON-level mutations: replace, delete or add values anywhere in a seed config ------------------

# text with lone surrogates (JSON's "\ud800"), which json.loads returns and no encoder writes
odd_text = st.lists(st.one_of(st.characters(categories=["Cs"]), st.characters()), max_size=8).map(
    "".join
)  # st.text never yields surrogates
BIG = [0, -1, 1, 2**31, 2**63 - 1, 2**63, 2**64, -(2**63) - 1, 10**30]
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-5, 300),
    st.sampled_from(BIG),
    st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from([0.0, -0.0, 1e308, 5e-324]),
    st.text(max_size=10),
    odd_text,
    st.sampled_from(
        ["[/x]", "[bold]", "DFlash2DraftModel", "dflash2", "dflash", "full_attention", "silu", "\x00", "é"]
    ),
)
values = st.recursive(
    scalars,
    lambda c: st.one_of(
        st.lists(c, max_size=5), st.dictionaries(st.one_of(st.text(max_size=8), odd_text), c, max_size=4)
    ),
    max_leaves=8,
)


def _paths(node: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix]
    if isinstance(node, dict):
        for k, v in node.items():
            out += _paths(v, prefix + (k,))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            out += _paths(v, prefix + (i,))
    return out


@st.composite
def mutated_configs(draw: Any) -> bytes:
    cfg = copy.deepcopy(json.loads(SEEDS[draw(st.sampled_from(sorted(SEEDS)))]))
    for _ in range(draw(st.integers(1, 4))):
        path = draw(st.sampled_from(_paths(cfg)))
        if not path:
            continue
        parent = cfg
        for k in path[:-1]:
            parent = parent[k]
        op = draw(st.sampled_from(["replace", "replace", "delete", "add"]))
        if op == "replace":
            parent[path[-1]] = draw(values)
        elif op == "delete":
            del parent[path[-1]]
        elif isinstance(parent, dict):
            parent[draw(st.one_of(st.text(max_size=12), odd_text))] = draw(values)
    return json.dumps(cfg).encode()


@fuzz(800)
@given(mutated_configs())
def test_mutated_configs(raw: bytes) -> None:
    run_all(raw)


# -- byte-level mutations and raw bytes -------------------------------------------------------------


@st.composite
def mutated_text(draw: Any) -> bytes:
    blob = bytearray(SEEDS[draw(st.sampled_from(sorted(SEEDS)))])
    for _ in range(draw(st.integers(1, 3))):
        pos = draw(st.integers(0, len(blob) - 1))
        op = draw(st.sampled_from(["set", "insert", "delete", "literal"]))
        if op == "set":
            blob[pos] = draw(st.integers(0, 255))
        elif op == "insert":
            blob[pos:pos] = draw(st.binary(min_size=1, max_size=4))
        elif op == "delete":
            del blob[pos : pos + draw(st.integers(1, 8))]
        else:
            blob[pos:pos] = draw(
                st.sampled_from(
                    [
                        b"NaN",
                        b"-Infinity",
                        b"1e999",
                        b"9" * 30,
                        b"[[[[",
                        b'"x": 1,',
                        b"\xef\xbb\xbf",
                        b"\\u0000",
                        b"\xff",
                    ]
                )
            )
    return bytes(blob)


@fuzz(600)
@given(mutated_text())
def test_mutated_config_bytes(raw: bytes) -> None:
    run_all(raw)


@fuzz(400)
@given(st.binary(max_size=120))
def test_random_config_bytes(raw: bytes) -> None:
    run_all(raw)


@fuzz(200)
@given(mutated_configs())
def test_mutated_configs_with_scan(raw: bytes) -> None:
    run_all(raw, scan=True)


def test_seeds_are_clean() -> None:
    # the good fixtures pass untouched, so the mutations above are what produces the findings
    for name in ("nested-v1", "nested-v2", "flat-v1", "flat-v2"):
        assert load_config(SEEDS[name])[1] == []
