"""Paired, interleaved whole-process measurements shared by bench_convert.py and bench_gguf.py.

Each command runs in its own subprocess under a small wrapper that reports its wall time, its CPU time
(user + sys of the command and its children, from getrusage) and its peak RSS (ru_maxrss). A pair runs
the baseline and the candidate back to back, the order alternating from pair to pair, with `sync` (untimed)
before each; the load average is recorded around every run. Cache state before each run:
  hot   the source files are read once (untimed), so the command reads them from the page cache
  cold  the source files are evicted from the page cache with posix_fadvise(POSIX_FADV_DONTNEED) after a
        sync (per file: the other jobs sharing this machine keep their caches, which
        `echo 3 > /proc/sys/vm/drop_caches` would throw away; `fincore` confirms 0 pages resident)
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

MEASURE = """
import json, resource, subprocess, sys, time
t = time.perf_counter()
rc = subprocess.call(sys.argv[1:], stdout=subprocess.DEVNULL)
u = resource.getrusage(resource.RUSAGE_CHILDREN)
print(json.dumps({"rc": rc, "seconds": time.perf_counter() - t, "cpu": u.ru_utime + u.ru_stime,
                  "max_rss_mib": u.ru_maxrss / 1024}))
"""


def files_of(paths: Iterable[Path]) -> list[Path]:
    out: list[Path] = []
    for p in paths:
        out += [p] if p.is_file() else sorted(f for f in p.rglob("*") if f.is_file())
    return out


def warm(paths: Iterable[Path]) -> None:
    for f in files_of(paths):
        subprocess.run(["cat", str(f)], stdout=subprocess.DEVNULL, check=True)


def evict(paths: Iterable[Path]) -> None:
    os.sync()
    for f in files_of(paths):
        fd = os.open(f, os.O_RDONLY)
        try:
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(fd)


def resident_mib(paths: Iterable[Path]) -> float | None:
    """Page-cache MiB of the files, by fincore (util-linux), or None where it is missing."""
    if shutil.which("fincore") is None:
        return None
    total = 0
    for f in files_of(paths):
        out = subprocess.run(["fincore", "-b", "-n", "-o", "RES", str(f)], capture_output=True, text=True)
        total += int(out.stdout.split()[0]) if out.returncode == 0 and out.stdout.split() else 0
    return total / (1 << 20)


def measure(cmd: list[str]) -> dict[str, Any]:
    before = os.getloadavg()[0]
    out = subprocess.run([sys.executable, "-c", MEASURE, *cmd], capture_output=True, text=True, check=True)
    res: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    if res["rc"] != 0:
        raise RuntimeError(f"{cmd} failed with {res['rc']}")
    res["load"] = (round(before, 2), round(os.getloadavg()[0], 2))
    return res


def paired(
    base: list[str],
    cand: list[str],
    sources: list[Path],
    cache: str,
    repeat: int,
    cleanup: Callable[[], None],
) -> dict[str, Any]:
    """`repeat` pairs of (baseline, candidate) in alternating order; medians and per-pair ratios."""
    runs: dict[str, list[dict[str, Any]]] = {"base": [], "cand": []}
    for i in range(repeat):
        for which in ("base", "cand") if i % 2 == 0 else ("cand", "base"):
            cleanup()
            os.sync()
            if cache == "hot":
                warm(sources)
            else:
                evict(sources)
            resident = resident_mib(sources)
            res = measure(base if which == "base" else cand)
            res["source_cached_mib"] = resident
            runs[which].append(res)
    cleanup()
    ratios = [c["seconds"] / b["seconds"] for b, c in zip(runs["base"], runs["cand"])]
    med = {
        k: {m: statistics.median(r[m] for r in v) for m in ("seconds", "cpu", "max_rss_mib")}
        for k, v in runs.items()
    }
    loads = [x for v in runs.values() for r in v for x in r["load"]]
    return {
        "cache": cache,
        "runs": runs,
        "median": med,
        "pair_ratios": ratios,
        "median_ratio": statistics.median(ratios),
        "load": (min(loads), max(loads)),
    }


def row(label: str, size: int, r: dict[str, Any]) -> str:
    m = r["median"]
    return (
        f"| {label} | {size / 1e9:.2f} | {r['cache']} | {m['base']['seconds']:.2f} | {m['cand']['seconds']:.2f} | "
        f"{r['median_ratio']:.2f}x ({', '.join(f'{x:.2f}' for x in r['pair_ratios'])}) | "
        f"{m['base']['cpu']:.2f} | {m['cand']['cpu']:.2f} | {m['cand']['max_rss_mib']:.0f} | "
        f"{r['load'][0]:.1f}-{r['load'][1]:.1f} |"
    )


HEADER = (
    "| what | GB | cache | baseline s | candidate s | candidate / baseline (median of pairs; each pair) | "
    "baseline CPU s | candidate CPU s | candidate peak RSS MiB | load average |\n"
    "|---|---|---|---|---|---|---|---|---|---|"
)
