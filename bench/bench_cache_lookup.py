"""Offline cache lookup of one repo's snapshot: scan_cache_dir (the whole cache) against
snapshot_download(local_files_only=True) (that repo only), on a cache of N repos; and with --audit, a
whole offline `dflash2-ckpt audit` of K of those repos from two source trees, paired.

    python bench/bench_cache_lookup.py --repos 300
    python bench/bench_cache_lookup.py --repos 300 --audit 30 --baseline /tmp/cache-scan --candidate . -n 3

The cache is laid out as huggingface_hub writes it (refs/main -> snapshots/<sha>/ with files linked to
blobs/), built in a temporary directory; each lookup runs 5 times, the median is reported. In the
audit, every repo holds the drafter of fixtures/good/nested-v2 (config.json + model.safetensors), so each
row is a real header-level verify read from the cache; HF_HUB_OFFLINE=1, nothing leaves the machine.
The baseline tree is this one with sources/hub_cache.py as it was before the lookup changed (the
whole-cache scan), so the two differ only in the lookup:

    git archive HEAD | tar -x -C /tmp/cache-scan
    git show 6ffff00^:dflash2_ckpt/sources/hub_cache.py > /tmp/cache-scan/dflash2_ckpt/sources/hub_cache.py
"""

from __future__ import annotations

import argparse
import hashlib
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "good" / "nested-v2"


def build(root: Path, repos: int, files: int, drafter: bool = False) -> None:
    real = {p.name: p.read_bytes() for p in FIXTURE.iterdir()} if drafter else {}
    for i in range(repos):
        repo = root / f"models--org--drafter-{i}"
        sha = hashlib.sha1(str(i).encode()).hexdigest()
        (repo / "refs").mkdir(parents=True)
        (repo / "refs" / "main").write_text(sha)
        snap = repo / "snapshots" / sha
        snap.mkdir(parents=True)
        (repo / "blobs").mkdir()
        names = (
            list(real)
            if drafter
            else ["config.json"] + [f"model-{j:05d}.safetensors" for j in range(1, files)]
        )
        for j, name in enumerate(names):
            blob = repo / "blobs" / hashlib.sha256(f"{i}:{j}".encode()).hexdigest()
            blob.write_bytes(real[name] if drafter else (b"{}" if j == 0 else b"\0" * 64))
            (snap / name).symlink_to(blob)


def median(fn: object, n: int = 5) -> float:
    times = []
    for _ in range(n):
        t = time.perf_counter()
        fn()  # type: ignore[operator]
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def audit_once(tree: Path, cache: str, repos: list[str]) -> tuple[float, float, int]:
    """(wall s, CPU s of the child, exit code) of one offline audit."""
    env = {**os.environ, "PYTHONPATH": str(tree), "HF_HUB_CACHE": cache, "HF_HUB_OFFLINE": "1"}
    before = os.times()
    t = time.perf_counter()
    p = subprocess.run(
        [sys.executable, "-m", "dflash2_ckpt", "audit", "--format", "json", *repos],
        cwd=tree,
        env=env,
        capture_output=True,
        text=True,
    )
    wall = time.perf_counter() - t
    after = os.times()
    if p.returncode not in (0, 1) or '"readable"' not in p.stdout and '"rows"' not in p.stdout:
        raise SystemExit(f"{tree}: audit exited {p.returncode}: {p.stderr[-2000:]}")
    return (
        wall,
        (after.children_user - before.children_user) + (after.children_system - before.children_system),
        p.returncode,
    )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repos", type=int, default=300)
    ap.add_argument("--files", type=int, default=4)
    ap.add_argument(
        "--audit", type=int, default=0, metavar="K", help="also audit K repos of the cache, offline"
    )
    ap.add_argument("--baseline", type=Path, help="tree with the whole-cache scan (see the docstring)")
    ap.add_argument("--candidate", type=Path, default=Path("."))
    ap.add_argument("-n", type=int, default=3, help="paired audit runs")
    a = ap.parse_args()
    from huggingface_hub import scan_cache_dir, snapshot_download

    with tempfile.TemporaryDirectory() as tmp:
        build(Path(tmp), a.repos, a.files, drafter=bool(a.audit))
        target = f"org/drafter-{a.repos // 2}"
        scan = median(lambda: [r for r in scan_cache_dir(tmp).repos if r.repo_id == target])
        one = median(lambda: snapshot_download(target, revision="main", cache_dir=tmp, local_files_only=True))
        files = len(list((Path(tmp) / "models--org--drafter-0" / "snapshots").rglob("*.*")))
        print(
            f"cache of {a.repos} repos x {files} files: scan_cache_dir {scan * 1000:.1f} ms, "
            f"snapshot_download(local_files_only) {one * 1000:.2f} ms per lookup"
        )
        if not a.audit:
            return
        if a.baseline is None:
            raise SystemExit("--audit needs --baseline (a tree with the whole-cache scan)")
        repos = [f"org/drafter-{i}" for i in range(0, a.repos, max(1, a.repos // a.audit))][: a.audit]
        trees = {"scan": a.baseline.resolve(), "lookup": a.candidate.resolve()}
        print(
            f"load average at start: {' '.join(f'{x:.2f}' for x in os.getloadavg())}; "
            f"offline audit of {len(repos)} repos (default --jobs), {a.n} paired runs"
        )
        wall: dict[str, list[float]] = {k: [] for k in trees}
        cpu: dict[str, list[float]] = {k: [] for k in trees}
        for i in range(a.n):
            for k in list(trees) if i % 2 == 0 else list(reversed(trees)):
                w, c, rc = audit_once(trees[k], tmp, repos)
                wall[k].append(w)
                cpu[k].append(c)
        for k in trees:
            print(
                f"  {k:<7} wall median {statistics.median(wall[k]):.2f} s (min {min(wall[k]):.2f}), "
                f"CPU median {statistics.median(cpu[k]):.2f} s; runs {' '.join(f'{x:.2f}' for x in wall[k])}"
            )
        print(
            f"  speed-up (median wall): {statistics.median(wall['scan']) / statistics.median(wall['lookup']):.1f}x"
        )
        print(f"load average at end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
