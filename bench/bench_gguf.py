#!/usr/bin/env python3
"""GGUF figures: header verify with a real-size vocabulary, `convert --to gguf` against `cp && sync` at
0.5 / 2 / 4 / 8 GB, and GGUF -> HF of the Qwen3.8-27B-DFlash2 layout in BF16 / Q8_0 / Q4_K_M.

    python bench/bench_gguf.py [--dir /tmp/dflash2-bench-gguf] [--sizes 0.5,2,4,8] [--repeat 2]
                               [--parts header,to-gguf,from-gguf] [--caches hot,cold]
                               [--kinds BF16,Q8_0,Q4_K_M] [--keep]

header     The 27B layout (fixtures/real/) converted `--to gguf --tokenizer-from` a synthetic target GGUF with
           a real-size vocabulary (248,320 tokens of 4-12 bytes, 247,000 merges: an 8 MB header), against
           the same layout as safetensors: `python -m dflash2_ckpt verify FILE --format json` in fresh
           processes, paired and interleaved (safetensors the baseline), hot and cold; and in-process
           (imports excluded, best of 5, hot): verify() of each, with the bytes it read.
to-gguf    bench_convert.py's dense layout (H 2048, vocab 151,936) at each size, every byte written, against
           `cp SRC/model.safetensors DST && sync`: `python -m dflash2_ckpt convert SRC -o DST.gguf --to gguf
           --tokenizer-from TOK.gguf` (BF16 kept: exact; a 151,936-token vocabulary with 150,000 merges).
from-gguf  The 27B layout with every byte written (normal values), as BF16 GGUF (convert --to gguf), and as
           Q8_0 and Q4_K_M made from it by llama.cpp's llama-quantize (the pinned b11434 build; Q8_0 by the
           toolkit's own `--to gguf --outtype q8_0` while the build is missing); each converted back
           `--to nested` against `cp FILE DST && sync`, paired, with peak RSS beside the largest tensor;
           and the `--dry-run` of each (fresh processes, wall and peak RSS). `--keep` keeps the built files
           in --dir, so that each kind can be measured in its own short run.
Paired runs, caches and the load average as in bench/_paired.py. Everything is deleted at the end.
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
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import _paired  # noqa: E402
import bench_convert  # noqa: E402

from dflash2_ckpt.dev.synth import materialise, read_tensor_list  # noqa: E402

REAL = ROOT / "fixtures" / "real"
VERIFY = """
import json, resource, sys, time
from dflash2_ckpt.usecases.verify import verify
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
    tokens = [
        ("".join(rng.choice(alphabet) for _ in range(rng.randint(4, 12)))).encode() for _ in range(vocab)
    ]
    w = gguf.GGUFWriter(path, "qwen3")
    w.add_tokenizer_model("gpt2")
    w.add_tokenizer_pre("qwen2")
    w.add_token_list(tokens)
    w.add_token_types([1] * vocab)
    w.add_token_merges(
        [f"{rng.choice(alphabet)}{rng.choice(alphabet)} {rng.choice(alphabet)}" for _ in range(merges)]
    )
    w.add_eos_token_id(min(vocab - 1, 248046))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_ti_data_to_file()
    w.close()


def cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "dflash2_ckpt", *args]


def normal_block() -> bytes:
    """64 MiB of BF16 values ~ N(0, 0.02): quantizers see real-looking weights, not NaN bit patterns."""
    import numpy as np

    a = (np.random.default_rng(1).standard_normal(32 << 20) * 0.02).astype(np.float32)
    return (a.view(np.uint32) >> 16).astype(np.uint16).tobytes()


def repeated(block: bytes) -> Any:
    def data(name: str, n: int) -> bytes:
        return (block * (n // len(block) + 1))[:n]

    return data


def header_part(d: Path, repeat: int, caches: list[str]) -> None:
    cfg = json.loads((REAL / "z-lab_Qwen3.8-27B-DFlash2.config.json").read_text())
    ts = read_tensor_list(REAL / "z-lab_Qwen3.8-27B-DFlash2.tensors.tsv")
    tok = d / "tok-248k.gguf"
    tokenizer_gguf(tok, cfg["vocab_size"], 247_000)
    st = materialise(d / "27b-sparse", cfg, ts)
    g = d / "27b.gguf"
    subprocess.run(
        cli("convert", str(st), "-o", str(g), "--to", "gguf", "--tokenizer-from", str(tok)),
        check=True,
        stdout=subprocess.DEVNULL,
    )
    from dflash2_ckpt.sources import LocalSource
    from dflash2_ckpt.sources.gguf_header import read_gguf_header

    h, _ = read_gguf_header(LocalSource(g), g.name)
    print(
        f"27B-layout GGUF: {g.stat().st_size:,} B (sparse), {len(h.tensors)} tensors, {len(h.kv)} keys, "
        f"header {h.header_bytes:,} B"
    )
    for what, path in (("safetensors", st), ("GGUF", g)):
        v = json.loads(
            subprocess.run(
                [sys.executable, "-c", VERIFY, str(path)], capture_output=True, text=True, check=True
            ).stdout
        )
        print(
            f"in-process header verify, {what}: {v['seconds'] * 1000:.1f} ms (best of 5, imports excluded, hot), "
            f"bytes read {v['bytes_read']:,}, peak RSS {v['max_rss_mib']:.0f} MiB, findings {v['findings']}"
        )
    base = cli("verify", str(st), "--format", "json")
    cand = cli("verify", str(g), "--format", "json")
    print("baseline: " + " ".join(base[1:]) + "; candidate: " + " ".join(cand[1:]))
    print(_paired.HEADER)
    for cache in caches:
        r = _paired.paired(
            base, cand, [st / "model.safetensors", st / "config.json", g], cache, repeat, lambda: None
        )
        print(_paired.row("verify GGUF (248k vocab) vs verify safetensors", g.stat().st_size, r), flush=True)
    shutil.rmtree(st)
    g.unlink()


def to_gguf_part(d: Path, sizes: list[float], repeat: int, caches: list[str]) -> None:
    tok = d / "tok-152k.gguf"
    tokenizer_gguf(tok, 151936, 150_000)
    print(
        "baseline: cp SRC/model.safetensors DST && sync; candidate: python -m dflash2_ckpt convert SRC -o DST.gguf "
        "--to gguf --tokenizer-from TOK.gguf"
    )
    print(_paired.HEADER)
    for gb in sizes:
        src = d / f"src-{gb}"
        size = bench_convert.build(src, gb)
        out_bin, out_gguf = d / "out.bin", d / "out.gguf"
        base = ["sh", "-c", f"cp '{src}/model.safetensors' '{out_bin}' && sync"]
        cand = cli("convert", str(src), "-o", str(out_gguf), "--to", "gguf", "--tokenizer-from", str(tok))

        def clean() -> None:
            out_bin.unlink(missing_ok=True)
            out_gguf.unlink(missing_ok=True)

        try:
            for cache in caches:
                r = _paired.paired(base, cand, [src], cache, repeat, clean)
                print(_paired.row("convert --to gguf, dense", size, r), flush=True)
        finally:
            shutil.rmtree(src, ignore_errors=True)


LLAMA_BIN = Path.home() / ".cache" / "dflash2-ckpt" / "llama.cpp-b11434" / "build" / "bin"


def quantize(src: Path, dst: Path, kind: str) -> str:
    """Q8_0 / Q4_K_M of the BF16 GGUF by llama-quantize; without the build, Q8_0 by the toolkit's own
    `--to gguf --outtype q8_0` (the gguf package's quantizer) from the dense source. Returns what made it."""
    env = dict(os.environ, LD_LIBRARY_PATH=str(LLAMA_BIN))
    subprocess.run(
        [str(LLAMA_BIN / "llama-quantize"), str(src), str(dst), kind, "2"],
        check=True,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    return "llama-quantize b11434"


def build_27b(d: Path, kinds: list[str]) -> dict[str, tuple[Path, str]]:
    """The 27B layout as each GGUF kind asked for, reused when already in `d` (--keep between runs)."""
    cfg = json.loads((REAL / "z-lab_Qwen3.8-27B-DFlash2.config.json").read_text())
    ts = read_tensor_list(REAL / "z-lab_Qwen3.8-27B-DFlash2.tensors.tsv")
    tok = d / "tok-248k.gguf"
    files = {k: d / f"27b-{k.lower()}.gguf" for k in kinds}
    made = {
        k: (d / f"27b-{k.lower()}.made").read_text() if (d / f"27b-{k.lower()}.made").exists() else ""
        for k in kinds
    }
    bf16 = d / "27b-bf16.gguf"
    todo = [k for k in kinds if not files[k].exists() or not made[k]]
    if todo and not tok.exists():
        tokenizer_gguf(tok, cfg["vocab_size"], 247_000)
    dense = d / "27b-dense"
    if todo and not bf16.exists():
        materialise(dense, cfg, ts, data=repeated(normal_block()))
        subprocess.run(
            cli("convert", str(dense), "-o", str(bf16), "--to", "gguf", "--tokenizer-from", str(tok)),
            check=True,
            stdout=subprocess.DEVNULL,
        )
        (d / "27b-bf16.made").write_text("convert --to gguf")
        made["BF16"] = "convert --to gguf"
    for k in todo:
        if k == "BF16":
            continue
        if (LLAMA_BIN / "llama-quantize").exists():
            made[k] = quantize(bf16, files[k], k)
        elif k == "Q8_0":
            if not dense.exists():
                materialise(dense, cfg, ts, data=repeated(normal_block()))
            subprocess.run(
                cli(
                    "convert",
                    str(dense),
                    "-o",
                    str(files[k]),
                    "--to",
                    "gguf",
                    "--outtype",
                    "q8_0",
                    "--tokenizer-from",
                    str(tok),
                ),
                check=True,
                stdout=subprocess.DEVNULL,
            )
            made[k] = "convert --to gguf --outtype q8_0 (gguf package)"
        else:
            raise SystemExit(f"{k} needs llama-quantize ({LLAMA_BIN}), which is not built yet")
        (d / f"27b-{k.lower()}.made").write_text(made[k])
    shutil.rmtree(dense, ignore_errors=True)
    return {k: (files[k], made[k]) for k in kinds}


def _out_sizes(f: Path) -> list[tuple[int, int, str]]:
    """(stored bytes, bytes once converted, name) per tensor: dense types copied, the others float32."""
    import math

    from dflash2_ckpt.sources import LocalSource
    from dflash2_ckpt.sources.gguf_header import read_gguf_header

    h, _ = read_gguf_header(LocalSource(f), f.name)
    return [
        (t.nbytes, t.nbytes if t.type_name in ("F32", "F16", "BF16") else 4 * math.prod(t.shape), t.name)
        for t in h.tensors
    ]


def largest(f: Path) -> tuple[int, int, str]:
    return max(_out_sizes(f), key=lambda x: x[1])


def out_bytes(f: Path) -> int:
    return sum(x[1] for x in _out_sizes(f))


def from_gguf_part(d: Path, kinds: list[str], repeat: int, caches: list[str]) -> None:
    files = build_27b(d, kinds)
    print(
        "baseline: sh -c 'cp FILE.gguf DST && sync'; candidate: python -m dflash2_ckpt convert FILE.gguf -o DST "
        "--to nested; dry run: the candidate with --dry-run (fresh process, file hot)"
    )
    out = d / "out"
    for kind, (f, made) in files.items():
        stored, f32, name = largest(f)
        print(
            f"{kind} ({made}): {f.stat().st_size:,} B; largest tensor as written {name}: {stored / 2**20:.0f} MiB "
            f"stored, {f32 / 2**20:.0f} MiB out",
            flush=True,
        )

        def clean() -> None:
            shutil.rmtree(out, ignore_errors=True)
            (d / "out.bin").unlink(missing_ok=True)

        base = ["sh", "-c", f"cp '{f}' '{d / 'out.bin'}' && sync"]
        cand = cli("convert", str(f), "-o", str(out), "--to", "nested")
        print(_paired.HEADER)
        for cache in caches:
            r = _paired.paired(base, cand, [f], cache, repeat, clean)
            print(_paired.row(f"GGUF {kind} -> HF nested", f.stat().st_size, r), flush=True)
        written = out_bytes(f)
        _paired.warm([f])
        dry = [
            _paired.measure(cli("convert", str(f), "-o", str(out), "--to", "nested", "--dry-run"))
            for _ in range(max(repeat, 3))
        ]
        dry_s = sorted(x["seconds"] for x in dry)[len(dry) // 2]
        dry_rss = max(x["max_rss_mib"] for x in dry)
        dry_load = [x for r in dry for x in r["load"]]
        print(
            f"{kind}: tensor bytes written {written / 1e9:.2f} GB; --dry-run median {dry_s:.2f} s (CPU "
            f"{sorted(x['cpu'] for x in dry)[len(dry) // 2]:.2f} s), peak RSS {dry_rss:.0f} MiB, "
            f"load {min(dry_load):.1f}-{max(dry_load):.1f}",
            flush=True,
        )
        clean()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--dir", default="/tmp/dflash2-bench-gguf")
    ap.add_argument("--sizes", default="0.5,2,4,8")
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--parts", default="header,to-gguf,from-gguf")
    ap.add_argument("--caches", default="hot,cold")
    ap.add_argument("--kinds", default="BF16,Q8_0,Q4_K_M", help="GGUF kinds of the from-gguf part")
    ap.add_argument("--keep", action="store_true", help="keep --dir (the built files) for the next run")
    a = ap.parse_args()
    d = Path(a.dir)
    if not a.keep:
        shutil.rmtree(d, ignore_errors=True)
    d.mkdir(parents=True, exist_ok=True)
    os.environ["PYTHONPATH"] = str(ROOT)
    parts, caches = a.parts.split(","), a.caches.split(",")
    try:
        if "header" in parts:
            header_part(d, max(a.repeat, 3), caches)
        if "to-gguf" in parts:
            to_gguf_part(d, [float(s) for s in a.sizes.split(",")], a.repeat, caches)
        if "from-gguf" in parts:
            from_gguf_part(d, a.kinds.split(","), a.repeat, caches)
    finally:
        if not a.keep:
            shutil.rmtree(d, ignore_errors=True)


if __name__ == "__main__":
    main()
