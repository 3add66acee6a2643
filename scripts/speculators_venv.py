#!/usr/bin/env python3
"""Install speculators 0.9.0, the real consumer of the flat dialect, into its own cached environment.

tests/convert/test_convert_speculators.py converts with the toolkit and loads the output with speculators
in this environment (its dependencies, datasets and openai among them, stay out of the toolkit's). The
venv goes into a cache directory outside the repository, torch is pinned to the CPU build first (an
unpinned torch would pull a multi-GB CUDA build), and a matching install is reused.  A failed install
leaves its reason in the cache, and the test skips quoting it.

Usage:  python scripts/speculators_venv.py [--cache DIR] [--json] [--check]
The cache defaults to ``$DFLASH2_CKPT_ENGINE_CACHE`` or ``~/.cache/dflash2-ckpt``.
Prints the venv's python (``--json``: one JSON object on stdout); the test finds it with ``--check --json``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
import venv
from pathlib import Path

VERSION = "0.9.0"
DIST = f"speculators=={VERSION}"
TORCH = "torch==2.13.0"  # the CPU build .ci/run installs; speculators 0.9.0 accepts torch 2.9..2.14.1
# pulled in by speculators, built against another torch: with them installed transformers cannot import
# PreTrainedModel (so neither can speculators); loading a drafter needs none of them
BROKEN = ("torchvision", "torchaudio", "torchcodec")
PROBE = "import importlib.metadata as m, speculators.models.dflash; print(m.version('speculators'))"
# anything that changes the environment changes the stamp, so a stale install is never reused
STAMP = {"dist": DIST, "torch": TORCH, "removed": list(BROKEN), "format": 1}


def cache_root(arg: str | None) -> Path:
    base = arg or os.environ.get("DFLASH2_CKPT_ENGINE_CACHE") or "~/.cache/dflash2-ckpt"
    return Path(base).expanduser().resolve() / f"speculators-{VERSION}"


def log(msg: str) -> None:
    print(f"[speculators {VERSION}] {msg}", file=sys.stderr, flush=True)


def python_of(root: Path) -> Path:
    return root / "venv" / "bin" / "python"


def locate(cache: str | None = None) -> dict[str, str] | None:
    """The finished, matching install, or None (nothing is installed)."""
    root = cache_root(cache)
    py = python_of(root)
    try:
        if json.loads((root / "dflash2-ckpt.stamp.json").read_text()) != STAMP:
            return None
    except (OSError, ValueError):
        return None
    if not py.exists():
        return None
    return {"version": VERSION, "dist": DIST, "python": str(py), "root": str(root)}


def failure(cache: str | None = None) -> str | None:
    """Why the last install failed (its last lines), or None."""
    try:
        return (cache_root(cache) / "failed.txt").read_text().strip() or None
    except OSError:
        return None


def _run(cmd: list[str]) -> None:
    res = subprocess.run(cmd, capture_output=True, text=True)
    if res.returncode != 0:
        tail = "\n".join((res.stderr or res.stdout).strip().splitlines()[-5:])
        raise RuntimeError(f"`{' '.join(cmd[2:])}` exited {res.returncode}: {tail}")


def install(root: Path) -> None:
    """A fresh venv, CPU torch then speculators into it, the broken packages out, and
    `import speculators.models.dflash` proven."""
    stamp = root / "dflash2-ckpt.stamp.json"
    stamp.unlink(missing_ok=True)
    env_dir = root / "venv"
    if env_dir.exists():
        shutil.rmtree(env_dir)
    venv.EnvBuilder(with_pip=True).create(env_dir)
    py = str(python_of(root))
    # wheels stay in pip's own cache (~/.cache/pip), so a rebuilt venv downloads nothing again
    _run([py, "-m", "pip", "install", "-q", TORCH])
    _run([py, "-m", "pip", "install", "-q", DIST, TORCH])
    _run([py, "-m", "pip", "uninstall", "-q", "-y", *BROKEN])
    _run([py, "-c", PROBE])
    stamp.write_text(json.dumps(STAMP))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument(
        "--cache", help="cache directory (default $DFLASH2_CKPT_ENGINE_CACHE or ~/.cache/dflash2-ckpt)"
    )
    ap.add_argument("--json", action="store_true", help="print one JSON object instead of lines")
    ap.add_argument(
        "--check", action="store_true", help="install nothing: report a finished install, or exit 1"
    )
    args = ap.parse_args()
    root = cache_root(args.cache)
    info = locate(args.cache)
    if args.check and info is None:
        why = failure(args.cache)
        reason = (
            f"the {DIST} install failed: {why}"
            if why
            else f"no finished {DIST} venv under {root}; run python scripts/speculators_venv.py"
        )
        if args.json:
            print(json.dumps({"error": reason}))
        else:
            print(reason, file=sys.stderr)
        return 1
    reused = info is not None
    t0 = time.monotonic()
    if info is None:
        root.mkdir(parents=True, exist_ok=True)
        (root / "failed.txt").unlink(missing_ok=True)
        log(f"installing {DIST} into {root / 'venv'} (a few minutes)")
        try:
            install(root)
        except (RuntimeError, OSError) as e:
            (root / "failed.txt").write_text(str(e))
            log(f"install failed: {e}")
            return 1
        info = locate(args.cache)
        assert info is not None
        log(f"installed in {time.monotonic() - t0:.0f} s")
    out = {**info, "reused": reused, "seconds": round(time.monotonic() - t0, 1)}
    print(json.dumps(out) if args.json else "\n".join(f"{k}: {v}" for k, v in out.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
