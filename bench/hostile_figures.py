#!/usr/bin/env python3
"""Figures for the hostile corpus of issue 22: every class (tests/adversarial/hostile.py) through every
command it reaches, each in a child process; counts tracebacks, hangs (past TIMEOUT_S) and unbounded
allocations (MemoryError under MEMORY_MIB of address space), and reports the longest wall time and the
highest peak RSS (getrusage of the child).

    PYTHONPATH=. python bench/hostile_figures.py [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "adversarial"))
sys.path.insert(0, str(ROOT / "tests"))
import hostile  # noqa: E402

from _kit.fakehub import FakeHub, gzip_bomb  # noqa: E402

HUB_DEADLINE_S = 6
# a hostile Hub (the fake one of the tests, on 127.0.0.1): fault kind and the path it hits, or a bad size
HUB_CLASSES: dict[str, tuple[str, str]] = {
    "hub-trickle-model-info": ("trickle", "/api/models/"),
    "hub-trickle-range-read": ("trickle", "/cdn/"),
    "hub-gzip-bomb": ("gzip-bomb", "/api/models/"),
    "hub-oversized-json": ("oversized", "/api/models/"),
    "hub-deep-json": ("deep-json", "/api/models/"),
    "hub-size-12abc": ("size", "12abc"),
    "hub-size-negative": ("size", "-5"),
}

TIMEOUT_S = 60
MEMORY_MIB = 2048
COMMANDS = ("verify", "inspect", "compat")


def _limits() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_MIB << 20, MEMORY_MIB << 20))


def run(args: list[str], extra_env: dict[str, str] | None = None) -> dict:
    env = dict(os.environ, PYTHONPATH=str(ROOT), OMP_NUM_THREADS="1", **(extra_env or {}))
    t0 = time.monotonic()
    # each case is the only child alive while it runs, so RUSAGE_CHILDREN's max is its own peak
    cmd = [
        sys.executable,
        "-c",
        "import resource, sys\nfrom dflash2_ckpt.cli import main\n"
        "try:\n    main()\nfinally:\n"
        "    sys.stderr.write('\\nPEAK_KB=%d\\n' % resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)",
        *args,
    ]
    try:
        p = subprocess.run(cmd, capture_output=True, timeout=TIMEOUT_S, preexec_fn=_limits, env=env)
    except subprocess.TimeoutExpired:
        return {"args": args, "hang": True, "seconds": TIMEOUT_S}
    err = p.stderr.decode(errors="replace")
    peak = next((int(x.split("=")[1]) for x in err.splitlines() if x.startswith("PEAK_KB=")), 0)
    out = p.stdout.decode(errors="replace")
    internal = '"internal error"' in out or "internal error" in err
    return {
        "args": args[:1],
        "rc": p.returncode,
        "seconds": round(time.monotonic() - t0, 2),
        "peak_mib": peak // 1024,
        "traceback": "Traceback" in err or internal,
        "memory_error": "MemoryError" in err + out,
        "hang": False,
    }


def _hub_rows(tmp: Path) -> list[dict]:
    rows = []
    gzip_bomb()
    for cid, (kind, arg) in HUB_CLASSES.items():
        with FakeHub() as hub:
            hub.trickle_s = 3.0
            hub.add_commit("org/drafter", hostile.GOOD / "nested-v2")
            if kind == "size":
                hub.sizes["model.safetensors"] = int(arg) if arg.lstrip("-").isdigit() else arg
            else:
                hub.inject(kind, arg, times=10_000)
            env = {
                "HF_ENDPOINT": hub.url,
                "HF_HOME": str(tmp / "hf-home" / cid),
                "HF_HUB_DISABLE_TELEMETRY": "1",
                "DFLASH2_CKPT_HUB_DEADLINE": str(HUB_DEADLINE_S),
                "DFLASH2_CKPT_HUB_BACKOFF": "0.05",
            }
            for cmd in ("verify", "inspect", "compat"):
                r = run([cmd, "org/drafter", "--format", "json"], env)
                r["class"] = cid
                rows.append(r)
                print(
                    f"{cid:28} {cmd:8} rc={r.get('rc')} {r['seconds']:6.2f}s {r.get('peak_mib', 0):5} MiB"
                    f"{'  TRACEBACK' if r.get('traceback') else ''}{'  HANG' if r['hang'] else ''}",
                    flush=True,
                )
    return rows


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--json")
    opts = ap.parse_args()
    classes = {**hostile.QUANT_CLASSES, **hostile.SIZE_CLASSES}
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for cid, build in classes.items():
            d = build(Path(tmp) / cid)
            for cmd in COMMANDS:
                r = run([cmd, str(d), "--format", "json"])
                r["class"] = cid
                rows.append(r)
                print(
                    f"{cid:28} {cmd:8} rc={r.get('rc')} {r['seconds']:6.2f}s {r.get('peak_mib', 0):5} MiB"
                    f"{'  TRACEBACK' if r.get('traceback') else ''}{'  HANG' if r['hang'] else ''}"
                    f"{'  MEMORY' if r.get('memory_error') else ''}",
                    flush=True,
                )
        rows += _hub_rows(Path(tmp))
    worst_t = max(rows, key=lambda r: r["seconds"])
    worst_m = max(rows, key=lambda r: r.get("peak_mib", 0))
    summary = {
        "classes": len(classes) + len(HUB_CLASSES),
        "commands": len(COMMANDS),
        "runs": len(rows),
        "tracebacks": sum(bool(r.get("traceback")) for r in rows),
        "hangs": sum(r["hang"] for r in rows),
        "unbounded_allocations": sum(bool(r.get("memory_error")) for r in rows),
        "longest_s": worst_t["seconds"],
        "longest": f"{worst_t['class']} {worst_t['args'][0]}",
        "peak_rss_mib": worst_m.get("peak_mib", 0),
        "peak": f"{worst_m['class']} {worst_m['args'][0]}",
    }
    print(json.dumps(summary, indent=2))
    if opts.json:
        Path(opts.json).write_text(json.dumps({"summary": summary, "runs": rows}, indent=2))


if __name__ == "__main__":
    main()
