#!/usr/bin/env python3
"""audit at scale: 500 drafter repos on the fake Hub, `--jobs 1` vs `--jobs 16`, then a cached re-run.

`python bench/bench_audit.py [--repos 500] [--latency 0.03] [--write]`: the test suite's fake Hub serves
`--repos` repos on 127.0.0.1 (copies of the good fixtures, one broken fixture in ten), answering every
request after `--latency` seconds, a stand-in for the network round trip to the Hub (the server runs on
this machine, so without it the measurement is of two Python processes sharing 2 cores). Each run is a
fresh `dflash2-ckpt audit --from-file LIST --format json --rate 1000` subprocess, so its peak RSS is its
own; the server counts requests and body bytes. --write replaces the `## audit` section of
bench/RESULTS.md.
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
sys.path.insert(0, str(ROOT / "tests"))

GOOD = ["nested-v2", "flat-v2", "nested-v1", "flat-v1"]
BROKEN = ["tensor-missing", "fc-wrong-shape", "v2-tensors-missing", "mask-id-out-of-vocab"]


def run(listing: Path, env: dict[str, str], jobs: int, cache: Path | None) -> dict[str, object]:
    cmd = [
        sys.executable,
        "-m",
        "dflash2_ckpt",
        "audit",
        "--from-file",
        str(listing),
        "--format",
        "json",
        "--rate",
        "1000",
        "--jobs",
        str(jobs),
    ] + (["--cache", str(cache)] if cache else [])
    t0 = time.perf_counter()
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    p = subprocess.run(cmd, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    doc = json.loads(p.stdout)
    return {
        "exit": p.returncode,
        "wall": wall,
        "rss_mib": max(rss, before) / 1024,
        "rows": len(doc["rows"]),
        "clean": doc["summary"]["clean"],
        "hits": doc["cache_hits"],
    }


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repos", type=int, default=500)
    ap.add_argument("--latency", type=float, default=0.03)
    ap.add_argument("--write", action="store_true")
    args = ap.parse_args()
    from _kit.fakehub import FakeHub

    tmp = Path(tempfile.mkdtemp(prefix="bench-audit-"))
    fixtures = ROOT / "fixtures"
    names = []
    with FakeHub() as hub:
        for n in range(args.repos):
            src = (
                fixtures / "broken" / BROKEN[n % len(BROKEN)]
                if n % 10 == 9
                else fixtures / "good" / GOOD[n % 4]
            )
            name = f"org{n % 7}/drafter-{n:04d}"
            hub.add_commit(name, src)
            names.append(name)
        listing = tmp / "list.txt"
        listing.write_text("\n".join(names) + "\n")
        hub.latency = args.latency
        env = {
            **os.environ,
            "HF_ENDPOINT": hub.url,
            "HF_HOME": str(tmp / "hf-home"),
            "PYTHONPATH": str(ROOT),
            "HF_HUB_DISABLE_TELEMETRY": "1",
        }
        env.pop("HF_TOKEN", None)
        lines = [f"{args.repos} repos, fake Hub latency {args.latency * 1000:.0f} ms per request"]
        results = {}
        for jobs in (1, 16):
            mark = len(hub.log)
            r = run(listing, env, jobs, None)
            reqs = hub.log[mark:]
            sent = sum(e.sent for e in reqs)
            results[jobs] = r
            lines.append(
                f"--jobs {jobs:2d}: {r['wall']:6.1f} s, {len(reqs) / args.repos:.1f} requests and "
                f"{sent / args.repos:,.0f} B per repo, peak RSS {r['rss_mib']:.0f} MiB, exit {r['exit']}, "
                f"{r['clean']}/{r['rows']} clean"
            )
        lines.append(f"speed-up --jobs 16 vs 1: {results[1]['wall'] / results[16]['wall']:.1f}x")  # type: ignore[operator]
        cache = tmp / "cache"
        run(listing, env, 16, cache)
        mark = len(hub.log)
        r = run(listing, env, 16, cache)
        reqs = hub.log[mark:]
        lines.append(
            f"cached re-run (--jobs 16, nothing changed): {r['wall']:.1f} s, "
            f"{len(reqs) / args.repos:.2f} requests per repo, {r['hits']} cache hits"
        )
    text = "\n".join(lines)
    print(text)
    if args.write:
        res = ROOT / "bench" / "RESULTS.md"
        body = res.read_text()
        section = (
            f"## audit\n\n`python bench/bench_audit.py --repos {args.repos} --latency {args.latency} --write`"
            " (2-core VM; the fake Hub runs in the parent process and its simulated round trip stands in"
            " for the network; each audit is its own subprocess)\n\n```text\n" + text + "\n```\n"
        )
        start = body.find("## audit\n")
        if start >= 0:
            end = body.find("\n## ", start + 1)
            body = body[:start] + section + (body[end + 1 :] if end >= 0 else "")
        else:
            body = body.rstrip("\n") + "\n\n" + section
        res.write_text(body)
    return 0


if __name__ == "__main__":
    sys.exit(main())
