#!/usr/bin/env python3
"""Builders of the hostile classes of issue 22: attacker-controlled patterns, names and sizes.

Every class is a function that writes its checkpoint (or file) under a directory and returns its
path; nothing is committed as data. `python tests/adversarial/hostile.py OUTDIR` writes them all
for manual poking, and bench/hostile_figures.py runs every class through every command it reaches.
"""

from __future__ import annotations

import json
import shutil
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
GOOD = ROOT / "fixtures" / "good"
QUANT = ROOT / "fixtures" / "quantized"

# a terminal clear, an OSC window title and a bidi override: what a tensor or config string may carry
TERMINAL_ESCAPES = "\x1b[2J\x1b]0;pwned\x07\u202e"
# a local directory / Hub subfolder name that would be a workflow command if written raw
WORKFLOW_INJECTION = "dflash\n::error file=evil.py,line=1::injected"
STOP_COMMANDS = "::stop-commands::tok"


def copy(src: Path, dst: Path) -> Path:
    shutil.copytree(src, dst)
    return dst


def edit_config(d: Path, edit: Callable[[dict[str, Any]], Any]) -> Path:
    p = d / "config.json"
    cfg = json.loads(p.read_text())
    edit(cfg)
    p.write_text(json.dumps(cfg))
    return d


def quant(tmp: Path, edit: Callable[[dict[str, Any]], Any], scheme: str = "w4a16") -> Path:
    """A quantized fixture whose quantization_config is edited."""
    return edit_config(copy(QUANT / scheme, tmp / "ckpt"), lambda c: edit(c["quantization_config"]))


def _ignore(pattern: str) -> Callable[[Path], Path]:
    return lambda tmp: quant(tmp, lambda q: q["ignore"].append(pattern))


def _weights(**kw: Any) -> Callable[[Path], Path]:
    return lambda tmp: quant(tmp, lambda q: q["config_groups"]["group_0"]["weights"].update(kw))


def _mlx(value: Any) -> Callable[[Path], Path]:
    def build(tmp: Path) -> Path:
        d = copy(GOOD / "nested-v2", tmp / "ckpt")
        return edit_config(d, lambda c: c.update(quantization={"group_size": 64, "bits": 4, "fc": value}))

    return build


def _mlx_bits(value: Any) -> Callable[[Path], Path]:
    def build(tmp: Path) -> Path:
        d = copy(GOOD / "nested-v2", tmp / "ckpt")
        return edit_config(d, lambda c: c.update(quantization={"group_size": 64, "bits": value}))

    return build


def _many_ignores(n: int) -> Callable[[Path], Path]:
    return lambda tmp: quant(tmp, lambda q: q.update(ignore=[f"layers.{i}.mlp.up_proj" for i in range(n)]))


def _many_regexes(n: int) -> Callable[[Path], Path]:
    return lambda tmp: quant(tmp, lambda q: q.update(ignore=[f"re:layers\\.{i}\\..*" for i in range(n)]))


# class -> builder: quantization configs an attacker controls (items 1, 10, 11)
QUANT_CLASSES: dict[str, Callable[[Path], Path]] = {
    "redos-alternation": _ignore("re:([a-z_.0-9]|[a-z_.0-9]|[a-z_.0-9])*!"),
    "redos-nested-plus": lambda tmp: quant(
        tmp, lambda q: q["config_groups"]["group_0"].update(targets=["re:(a+)+$", "Linear"])
    ),
    "redos-lookahead-nested": _ignore("re:(?=l)([a-z_.0-9]|[a-z_.0-9])*!"),
    "redos-backref-nested": _ignore("re:(l)(\\1|[a-z_.0-9]|[a-z_.0-9])*!"),
    "pattern-too-long": _ignore("re:" + "a" * 5000),
    "regexes-too-many": _many_regexes(3000),
    "ignore-exact-100k": _many_ignores(100_000),
    "ignore-exact-9k": _many_ignores(9_000),
    "symmetric-string": _weights(symmetric="no"),
    "num-bits-string": _weights(num_bits="four"),
    "mlx-bits-string": _mlx_bits("four"),
    "mlx-bits-null-override": _mlx({"bits": None}),
    "mlx-bits-string-override": _mlx({"bits": "four"}),
}


def _many_taps(n: int) -> Callable[[Path], Path]:
    """A nested config whose target_layer_ids lists n taps (5M: a 44 MB config)."""

    def build(tmp: Path) -> Path:
        d = copy(GOOD / "nested-v2", tmp / "ckpt")
        return edit_config(d, lambda c: c["dflash_config"].update(target_layer_ids=list(range(n))))

    return build


def _many_tensors(n: int) -> Callable[[Path], Path]:
    """The good config beside a model.safetensors whose header describes n one-element tensors."""

    def build(tmp: Path) -> Path:
        import struct

        d = copy(GOOD / "nested-v2", tmp / "ckpt")
        parts = ",".join(
            f'"t{i}": {{"dtype": "F32", "shape": [1], "data_offsets": [{4 * i}, {4 * i + 4}]}}'
            for i in range(n)
        )
        raw = ("{" + parts + "}").encode()
        raw += b" " * (-len(raw) % 8)
        with open(d / "model.safetensors", "wb") as f:
            f.write(struct.pack("<Q", len(raw)) + raw)
            f.truncate(8 + len(raw) + 4 * n)
        return d

    return build


def indent_blowup(tmp: Path) -> Path:
    """A config of about 2 MB that passes verify, with an unknown key whose 1.1M numbers sit 32 levels
    deep: indented two spaces a level it would be over 64 MB, the cap every reader applies."""
    d = copy(GOOD / "nested-v2", tmp / "ckpt")
    junk: Any = [[0] * 55_000 for _ in range(20)]
    for _ in range(30):
        junk = [junk]
    return edit_config(d, lambda c: c.update(junk=junk))


# class -> builder: sizes under the byte caps that still ask for unbounded work (item 11)
SIZE_CLASSES: dict[str, Callable[[Path], Path]] = {
    "taps-5m": _many_taps(5_000_000),
    "tensors-1m": _many_tensors(1_000_000),
    "ignore-exact-1m": _many_ignores(1_000_000),
}


def named(tmp: Path, name: str) -> Path:
    """The good nested-v2 checkpoint in a directory with a hostile name."""
    return copy(GOOD / "nested-v2", tmp / name)


def extra_tensor(tmp: Path, name: str) -> Path:
    """The good nested-v2 checkpoint with one more (unexpected) tensor whose name is hostile."""
    import numpy as np
    from safetensors.numpy import load_file, save_file

    d = copy(GOOD / "nested-v2", tmp / "ckpt")
    tensors = load_file(str(d / "model.safetensors"))
    tensors[name] = np.zeros((2,), dtype=np.float32)
    save_file(tensors, str(d / "model.safetensors"))
    return d


def main(out: str) -> None:
    root = Path(out)
    for cid, build in {**QUANT_CLASSES, **SIZE_CLASSES}.items():
        (root / cid).mkdir(parents=True)
        print(cid, build(root / cid))


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "hostile-corpus")
