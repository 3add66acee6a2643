"""Start-up of the CLI, whole process, paired: the same commands from two source trees, alternated run by
run so that machine load hits both alike. Reports the median and the minimum wall time of each, the
median CPU time (user + sys of the child), and with --importtime the cumulative import time that
`python -X importtime` reports (the sum over top-level imports, median of the runs): a figure that
load changes far less than wall time.

    git archive main | tar -x -C /tmp/main-tree
    python bench/bench_start.py --baseline /tmp/main-tree --candidate . -n 15 --importtime

Each tree runs as `python -m dflash2_ckpt ...` with PYTHONPATH set to it (the installed metadata
answers --version for both). Both trees are byte-compiled first (compileall), as an installed package
is: with PYTHONDONTWRITEBYTECODE set (this machine's shells set it) every run would otherwise compile
every module it imports from source, a cost no user pays."""

from __future__ import annotations

import argparse
import compileall
import os
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

DRAFTER = "fixtures/good/nested-v2"
COMMANDS = [["--version"], ["hook", "config", f"{DRAFTER}/config.json"], ["verify", DRAFTER]]
_LINE = re.compile(r"^import time:\s+(\d+) \|\s+(\d+) \|( *)(\S+)$")


def once(tree: Path, args: list[str], importtime: bool = False) -> tuple[float, float, float]:
    """(wall s, child CPU s, cumulative import ms) of one whole-process run."""
    env = {**os.environ, "PYTHONPATH": str(tree)}
    flags = ["-X", "importtime"] if importtime else []
    before = os.times()
    t = time.perf_counter()
    p = subprocess.run(
        [sys.executable, *flags, "-m", "dflash2_ckpt", *args],
        cwd=tree,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE if importtime else subprocess.DEVNULL,
        text=True,
    )
    wall = time.perf_counter() - t
    after = os.times()
    if p.returncode not in (0, 1):
        raise SystemExit(f"{tree}: {' '.join(args)} exited {p.returncode}")
    cpu = (after.children_user - before.children_user) + (after.children_system - before.children_system)
    return wall, cpu, import_ms(p.stderr) if importtime else 0.0


def import_ms(stderr: str) -> float:
    """Sum of the cumulative times of the top-level imports (depth 0 in -X importtime's tree)."""
    total = 0
    for line in stderr.splitlines():
        m = _LINE.match(line)
        if m and len(m.group(3)) == 1:
            total += int(m.group(2))
    return total / 1000


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--baseline", type=Path, required=True)
    ap.add_argument("--candidate", type=Path, default=Path("."))
    ap.add_argument("-n", type=int, default=15)
    ap.add_argument("--importtime", action="store_true", help="also n paired -X importtime runs per command")
    a = ap.parse_args()
    trees = {"baseline": a.baseline.resolve(), "candidate": a.candidate.resolve()}
    for tree in trees.values():
        compileall.compile_dir(tree / "dflash2_ckpt", quiet=1)
    print(
        f"load average at start: {' '.join(f'{x:.2f}' for x in os.getloadavg())}; {a.n} paired runs per command"
    )
    print(
        f"{'command':<44} {'baseline median/min':>20} {'candidate median/min':>21} {'CPU base/cand':>15}"
        + (f" {'imports base/cand':>19}" if a.importtime else "")
    )
    for args in COMMANDS:
        wall: dict[str, list[float]] = {k: [] for k in trees}
        cpu: dict[str, list[float]] = {k: [] for k in trees}
        imp: dict[str, list[float]] = {k: [] for k in trees}
        for i in range(a.n):
            order = list(trees) if i % 2 == 0 else list(reversed(trees))
            for k in order:
                w, c, _ = once(trees[k], args)
                wall[k].append(w)
                cpu[k].append(c)
            if a.importtime:
                for k in order:
                    imp[k].append(once(trees[k], args, importtime=True)[2])
        cells = [f"{statistics.median(wall[k]):.3f} / {min(wall[k]):.3f} s" for k in trees]
        c = "/".join(f"{statistics.median(cpu[k]):.3f}" for k in trees) + " s"
        row = f"{' '.join(args):<44} {cells[0]:>20} {cells[1]:>21} {c:>15}"
        if a.importtime:
            row += " " + f"{'/'.join(f'{statistics.median(imp[k]):.0f}' for k in trees)} ms".rjust(19)
        print(row)
    print(f"load average at end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
