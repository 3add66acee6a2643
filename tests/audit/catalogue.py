"""A fake Hub catalogue of 50+ drafters: fixtures, real-shape layouts, broken ones, and hostile repos."""

from __future__ import annotations

import json
from pathlib import Path

from _kit.fakehub import FakeHub
from conftest import FIXTURES, REAL, real_config
from dflash2_ckpt.dev.synth import materialise, read_tensor_list

BROKEN = [
    "tensor-missing",
    "fc-wrong-shape",
    "v2-tensors-missing",
    "v2-tensors-under-v1",
    "mask-id-out-of-vocab",
    "group-size-not-divisor",
    "header-truncated",
    "dspark-not-dflash",
    "no-weights",
    "weight-wrong-dtype",
    "shard-missing",
    "index-disagrees",
]


def build(hub: FakeHub, scratch: Path) -> dict[str, str]:
    """Fill `hub`; returns repo id -> what it is ("good", "broken", "gated", "vanishes", "throttled", ...)."""
    kinds: dict[str, str] = {}
    good = FIXTURES / "good"
    for n in range(16):
        hub.add_commit(f"zlab/nested-v2-{n:02d}", good / "nested-v2", tags={"dflash", "dflash2"})
        kinds[f"zlab/nested-v2-{n:02d}"] = "good"
    for n in range(10):
        hub.add_commit(f"spec/flat-v2-{n:02d}", good / "flat-v2", tags={"dflash", "dflash2", "speculators"})
        kinds[f"spec/flat-v2-{n:02d}"] = "good"
    for n in range(6):
        hub.add_commit(f"zlab/nested-v1-{n:02d}", good / "nested-v1", tags={"dflash"})
        kinds[f"zlab/nested-v1-{n:02d}"] = "good"
    for n in range(4):
        hub.add_commit(f"spec/flat-v1-{n:02d}", good / "flat-v1", tags={"dflash", "speculators"})
        kinds[f"spec/flat-v1-{n:02d}"] = "good"
    for name in ("z-lab_Qwen3.8-27B-DFlash2", "z-lab_Muse-Glimmer-30B-DFlash2"):
        tsv = REAL / f"{name}.tensors.tsv"
        if tsv.exists():
            d = materialise(scratch / name, real_config(name), read_tensor_list(tsv))
            repo = "z-lab/" + name.split("_", 1)[1]
            hub.add_commit(repo, d, tags={"dflash", "dflash2"})
            kinds[repo] = "real"
    for b in BROKEN:
        hub.add_commit(f"broken/{b}", FIXTURES / "broken" / b, tags={"dflash"})
        kinds[f"broken/{b}"] = "empty" if b == "no-weights" else "broken"
    # hostile: gated, gone after its metadata was read, answering 429 twice, an empty repo
    hub.add_commit("org/gated", good / "nested-v2", gated=True, granted={"hf_granted"})
    kinds["org/gated"] = "gated"
    hub.add_commit("org/vanishes", good / "nested-v2", vanish_after_info=True)
    kinds["org/vanishes"] = "vanishes"
    hub.add_commit("org/throttled", good / "nested-v2", tags={"dflash2"})
    kinds["org/throttled"] = "throttled"
    hub.add_commit("org/empty", {"README.md": b"# nothing here\n"})
    kinds["org/empty"] = "empty"
    # a target model repo with its drafter in a subfolder
    target = FIXTURES / "targets" / "tiny-target"
    hub.add_commit("org/target-with-drafter", {**{p.name: p for p in target.iterdir() if p.is_file()}})
    hub.add_commit("org/target-with-drafter", good / "nested-v2", prefix="dflash/")
    kinds["org/target-with-drafter"] = "subfolder"
    return kinds


def config_of(path: Path) -> dict[str, object]:
    return json.loads((path / "config.json").read_text())
