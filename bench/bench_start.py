"""Start-up of the CLI, whole process, paired: the same commands from two source trees, alternated run by
run so that machine load hits both alike. Reports the median and the minimum wall time of each.

    git archive main | tar -x -C /tmp/main-tree
    python bench/bench_start.py --baseline /tmp/main-tree --candidate . -n 15

Each tree runs as `python -m dflash2_ckpt ...` with PYTHONPATH set to it (the installed metadata
answers --version for both)."""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

DRAFTER = "fixtures/good/nested-v2"
COMMANDS = [["--version"], ["hook", "config", f"{DRAFTER}/config.json"], ["verify", DRAFTER]]


def once(tree: Path, args: list[str]) -> float:
    env = {**os.environ, "PYTHONPATH": str(tree)}
    t = time.perf_counter()
    subprocess.run([sys.executable, "-m", "dflash2_ckpt", *args], cwd=tree, env=env, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - t


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--baseline", type=Path, required=True)
    ap.add_argument("--candidate", type=Path, default=Path("."))
    ap.add_argument("-n", type=int, default=15)
    a = ap.parse_args()
    trees = {"baseline": a.baseline.resolve(), "candidate": a.candidate.resolve()}
    print(f"load average at start: {os.getloadavg()[0]:.2f}; {a.n} paired runs per command")
    print(f"{'command':<44} {'baseline median/min':>20} {'candidate median/min':>21}")
    for args in COMMANDS:
        times: dict[str, list[float]] = {k: [] for k in trees}
        for i in range(a.n):
            order = list(trees) if i % 2 == 0 else list(reversed(trees))
            for k in order:
                times[k].append(once(trees[k], args))
        cells = [f"{statistics.median(times[k]):.3f} / {min(times[k]):.3f} s" for k in trees]
        print(f"{' '.join(args):<44} {cells[0]:>20} {cells[1]:>21}")
    print(f"load average at end: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
