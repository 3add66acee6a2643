"""Conversions never change what llama.cpp computes: for each drafter kind llama.cpp runs, every route through
`convert` to a GGUF drafts the same in llama-server (b11434, CPU) on the same prompts, greedy.

Each kind carries the recall drafter's trained weights (the tensors a kind adds, attention biases and sinks,
are zero), so the drafter accepts drafts and a route that changed a value would show in τ. Routes, as a user
converts: the HF drafter straight to GGUF; through flat; through flat and back to nested; and the first GGUF
back to nested and to GGUF again (MiMo's window and sinks have no flat form: convert refuses those routes). The engine's own counters (drafted and accepted tokens, per prompt the
tokens it generated in how many steps) must be equal on every route.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from safetensors.numpy import load_file, save_file

from _kit.cli import invoke_cli
from dflash2_ckpt.cli import main

from . import kinds
from .conftest import PAIR

# kinds llama.cpp serves: the recall drafter itself (nested DFlash2) and the fixture kinds' geometries. Left
# out: bias (llama-server refuses attention biases in a DFlash drafter, "wrong number of tensors",
# test_accept_engine) and reduced (a flat v1 drafter only; its converted GGUF drafts as the full-vocabulary one in
# the golden table's reduced-vocab-converted rows)
KINDS = ["v2", "v1", "sliding", "mimo"]
OPTS = ["--max-new-tokens", "32", "--limit", "4", "--format", "json"]


def _convert(src: Path, dst: Path, to: str, ggufs: dict[str, Path], *, refused: str | None = None) -> Path:
    extra = ["--tokenizer-from", str(ggufs["target"])] if to == "gguf" else ["--target", str(PAIR / "target")]
    r = invoke_cli(main, ["convert", str(src), "--to", to, "-o", str(dst), *extra, "--format", "json"])
    if refused is not None:
        assert r.exit_code == 1 and refused in json.loads(r.stdout)["error"]["message"], r.output
        return dst
    assert r.exit_code == 0, r.output
    return dst


def trained(kind: str, out: Path) -> Path:
    """The recall drafter's weights in `kind`'s config; tensors the kind adds are zero."""
    if kind == "v2":
        return Path(shutil.copytree(PAIR / "drafter", out))
    d = kinds.write(kind, out)
    weights = load_file(PAIR / "drafter" / "model.safetensors")
    [shard] = d.glob("*.safetensors")
    mine = load_file(shard)
    for name, value in mine.items():
        mine[name] = weights[name] if name in weights and weights[name].shape == value.shape else value * 0
    assert any(n in weights for n in mine)
    save_file(mine, shard, metadata={"format": "pt"})
    return d


# the flat dialect has no key for MiMo's window and sinks, so convert refuses the flat routes of that kind
NO_FLAT = {"mimo": "the flat dialect has no key for them"}


def routes(kind: str, src: Path, root: Path, ggufs: dict[str, Path]) -> dict[str, Path]:
    direct = _convert(src, root / "direct.gguf", "gguf", ggufs)
    out = {
        "direct": direct,
        "gguf-nested": _convert(
            _convert(direct, root / "gguf-nested", "nested", ggufs), root / "gguf-nested.gguf", "gguf", ggufs
        ),
    }
    if kind in NO_FLAT:
        _convert(src, root / "flat", "flat", ggufs, refused=NO_FLAT[kind])
        return out
    flat = _convert(src, root / "flat", "flat", ggufs)
    out["flat"] = _convert(flat, root / "flat.gguf", "gguf", ggufs)
    out["flat-nested"] = _convert(
        _convert(flat, root / "flat-nested", "nested", ggufs), root / "flat-nested.gguf", "gguf", ggufs
    )
    return out


def _engine_counts(gguf: Path, engine: dict[str, str], ggufs: dict[str, Path]) -> dict[str, Any]:
    r = invoke_cli(
        main,
        [
            "accept",
            str(gguf),
            "--target",
            str(ggufs["target"]),
            "--engine",
            "llama.cpp",
            "--llama-server",
            engine["llama_server"],
            "--hf-target",
            str(PAIR / "target"),
            *OPTS,
        ],
    )
    assert r.exit_code in (0, 1), r.output  # 1: DF751 on a kind that drafts little
    doc = json.loads(r.stdout)
    d = doc["engine_details"]
    return {
        "tau": doc["tau"]["mean"],
        "draft_n": d["draft_n"],
        "draft_n_accepted": d["draft_n_accepted"],
        "prompts": [(p["generated"], p["steps"], p["lossless"]) for p in doc["prompts"]],
        "codes": sorted(f["code"] for f in doc["findings"]),
    }


@pytest.mark.parametrize("kind", KINDS)
def test_every_route_drafts_the_same_in_llama_cpp(kind, engine, ggufs, tmp_path):
    src = trained(kind, tmp_path / kind)
    counts = {
        name: _engine_counts(g, engine, ggufs) for name, g in routes(kind, src, tmp_path, ggufs).items()
    }
    first = counts["direct"]
    assert first["draft_n"] > 0 and first["draft_n_accepted"] > 0, first  # it drafts: a change would show
    assert all(ok for _, _, ok in first["prompts"])
    assert {name: c for name, c in counts.items() if c != first} == {}, counts
