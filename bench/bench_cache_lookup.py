"""Offline cache lookup of one repo's snapshot: scan_cache_dir (the whole cache) against
snapshot_download(local_files_only=True) (that repo only), on a cache of N repos.

    python bench/bench_cache_lookup.py --repos 300

The cache is laid out as huggingface_hub writes it (refs/main -> snapshots/<sha>/ with files linked to
blobs/), built in a temporary directory; each lookup runs 5 times, the median is reported."""
from __future__ import annotations

import argparse
import hashlib
import statistics
import tempfile
import time
from pathlib import Path


def build(root: Path, repos: int, files: int) -> None:
    for i in range(repos):
        repo = root / f"models--org--drafter-{i}"
        sha = hashlib.sha1(str(i).encode()).hexdigest()
        (repo / "refs").mkdir(parents=True)
        (repo / "refs" / "main").write_text(sha)
        snap = repo / "snapshots" / sha
        snap.mkdir(parents=True)
        (repo / "blobs").mkdir()
        for j in range(files):
            blob = repo / "blobs" / hashlib.sha256(f"{i}:{j}".encode()).hexdigest()
            blob.write_bytes(b"{}" if j == 0 else b"\0" * 64)
            (snap / ("config.json" if j == 0 else f"model-{j:05d}.safetensors")).symlink_to(blob)


def median(fn: object, n: int = 5) -> float:
    times = []
    for _ in range(n):
        t = time.perf_counter()
        fn()  # type: ignore[operator]
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def main() -> None:
    from huggingface_hub import scan_cache_dir, snapshot_download
    ap = argparse.ArgumentParser()
    ap.add_argument("--repos", type=int, default=300)
    ap.add_argument("--files", type=int, default=4)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        build(Path(tmp), a.repos, a.files)
        target = f"org/drafter-{a.repos // 2}"
        scan = median(lambda: [r for r in scan_cache_dir(tmp).repos if r.repo_id == target])
        one = median(lambda: snapshot_download(target, revision="main", cache_dir=tmp, local_files_only=True))
    print(f"cache of {a.repos} repos x {a.files} files: scan_cache_dir {scan * 1000:.1f} ms, "
          f"snapshot_download(local_files_only) {one * 1000:.2f} ms per lookup")


if __name__ == "__main__":
    main()
