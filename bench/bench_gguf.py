#!/usr/bin/env python3
"""GGUF figures on the published Qwen3.8-27B-DFlash2 layout (fixtures/real/).

    python bench/bench_gguf.py [--dir /tmp/dflash2-bench-gguf] [--repeat 3] [--no-dense]

1. A target tokenizer GGUF with a real-size vocabulary (248,320 tokens of 4-12 bytes, 247,000 merges), so
   the drafter's header is as large as a real one (several MB).
2. The 27B layout materialised sparse, converted `--to gguf --tokenizer-from` it (BF16 kept: exact).
3. Header-level `verify` of that GGUF: bytes read, in-process time (best of 5, imports excluded), peak RSS,
   and the CLI end to end in a fresh process.
4. Unless --no-dense: the same layout with every data byte written (3.85 GB, a repeated random block),
   then `cp` vs `cp && sync` vs `dflash2-ckpt convert --to gguf` (which fsyncs and reads every tensor back),
   each in its own subprocess (peak RSS = that child's ru_maxrss), the source read once beforehand.
Everything is deleted at the end.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from dflash2_ckpt.dev.synth import materialise, read_tensor_list  # noqa: E402

REAL = ROOT / "fixtures" / "real"
MEASURE = """
import json, resource, subprocess, sys, time
t = time.perf_counter()
rc = subprocess.call(sys.argv[1:], stdout=subprocess.DEVNULL)
print(json.dumps({"rc": rc, "seconds": time.perf_counter() - t,
                  "max_rss_mib": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024}))
"""
VERIFY = """
import json, resource, sys, time
from dflash2_ckpt.verify import verify
best = None
for _ in range(5):
    t = time.perf_counter()
    r = verify(sys.argv[1])
    dt = time.perf_counter() - t
    best = dt if best is None else min(best, dt)
print(json.dumps({"seconds": best, "bytes_read": r.bytes_read, "findings": sorted({f.code for f in r.findings}),
                  "max_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def tokenizer_gguf(path: Path, vocab: int, merges: int) -> None:
    import gguf
    rng = random.Random(0)
    alphabet = "abcdefghijklmnopqrstuvwxyzĠ"
    tokens = [("".join(rng.choice(alphabet) for _ in range(rng.randint(4, 12)))).encode() for _ in range(vocab)]
    w = gguf.GGUFWriter(path, "qwen3")
    w.add_tokenizer_model("gpt2")
    w.add_tokenizer_pre("qwen2")
    w.add_token_list(tokens)
    w.add_token_types([1] * vocab)
    w.add_token_merges([f"{rng.choice(alphabet)}{rng.choice(alphabet)} {rng.choice(alphabet)}" for _ in range(merges)])
    w.add_eos_token_id(248046)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_ti_data_to_file()
    w.close()


def measure(*cmd: str) -> dict[str, float]:
    out = subprocess.run([sys.executable, "-c", MEASURE, *cmd], capture_output=True, text=True, check=True)
    return json.loads(out.stdout)  # type: ignore[no-any-return]


def cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "dflash2_ckpt", *args]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--dir", default="/tmp/dflash2-bench-gguf")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--no-dense", action="store_true")
    a = ap.parse_args()
    d = Path(a.dir)
    shutil.rmtree(d, ignore_errors=True)
    d.mkdir(parents=True)
    os.environ["PYTHONPATH"] = str(ROOT)
    try:
        cfg = json.loads((REAL / "z-lab_Qwen3.8-27B-DFlash2.config.json").read_text())
        ts = read_tensor_list(REAL / "z-lab_Qwen3.8-27B-DFlash2.tensors.tsv")
        tok = d / "target-tokenizer.gguf"
        tokenizer_gguf(tok, cfg["vocab_size"], 247_000)
        sparse = materialise(d / "27b-sparse", cfg, ts)
        g = d / "27b.gguf"
        conv = measure(*cli("convert", str(sparse), "-o", str(g), "--to", "gguf", "--tokenizer-from", str(tok)))
        from dflash2_ckpt.sources import LocalSource
        from dflash2_ckpt.sources.gguf_header import read_gguf_header
        h, _ = read_gguf_header(LocalSource(g), g.name)
        print(f"27B-layout GGUF: {g.stat().st_size:,} B (sparse), {len(h.tensors)} tensors, {len(h.kv)} keys, "
              f"header {h.header_bytes:,} B (data from byte {h.data_start:,}); written from the sparse source "
              f"in {conv['seconds']:.2f} s, peak RSS {conv['max_rss_mib']:.0f} MiB")
        v = json.loads(subprocess.run([sys.executable, "-c", VERIFY, str(g)], capture_output=True, text=True,
                                      check=True).stdout)
        print(f"header verify: {v['seconds'] * 1000:.0f} ms (best of 5, imports excluded), bytes read "
              f"{v['bytes_read']:,} ({v['bytes_read'] - h.header_bytes:,} past the header), peak RSS "
              f"{v['max_rss_mib']:.0f} MiB, findings {v['findings']}")
        runs = [measure(*cli("verify", str(g), "--format", "json")) for _ in range(a.repeat)]
        print("CLI verify end to end (fresh process, imports included): "
              + ", ".join(f"{r['seconds']:.2f} s" for r in runs) + f"; peak RSS {max(r['max_rss_mib'] for r in runs):.0f} MiB")
        if a.no_dense:
            return
        block = random.Random(1).randbytes(64 << 20)

        def data(name: str, n: int) -> bytes:
            return (block * (n // len(block) + 1))[:n]
        dense = materialise(d / "27b-dense", cfg, ts, data=data)
        subprocess.run(["cat", str(dense / "model.safetensors")], stdout=subprocess.DEVNULL, check=True)
        rows: dict[str, list[dict[str, float]]] = {"cp": [], "cp+sync": [], "convert --to gguf": []}
        for _ in range(a.repeat):
            for name, cmd in (("cp", ["cp", str(dense / "model.safetensors"), str(d / "out.bin")]),
                              ("cp+sync", ["sh", "-c", f"cp {dense}/model.safetensors {d}/out.bin && sync"]),
                              ("convert --to gguf", cli("convert", str(dense), "-o", str(d / "out.gguf"), "--to",
                                                        "gguf", "--tokenizer-from", str(tok)))):
                subprocess.run(["sync"], check=True)
                r = measure(*cmd)
                assert r["rc"] == 0, (name, r)
                rows[name].append(r)
                for f in ("out.bin", "out.gguf"):
                    (d / f).unlink(missing_ok=True)
        size = (dense / "model.safetensors").stat().st_size
        print(f"dense 27B layout: {size:,} B")
        base = min(r["seconds"] for r in rows["cp"])
        base_sync = min(r["seconds"] for r in rows["cp+sync"])
        for name, rs in rows.items():
            best = min(r["seconds"] for r in rs)
            print(f"  {name:18s} best {best:6.2f} s  ({best / base:.2f}x cp, {best / base_sync:.2f}x cp+sync)  "
                  f"peak RSS {max(r['max_rss_mib'] for r in rs):5.0f} MiB  runs "
                  + " ".join(f"{r['seconds']:.2f}" for r in rs))
    finally:
        shutil.rmtree(d, ignore_errors=True)


if __name__ == "__main__":
    main()
