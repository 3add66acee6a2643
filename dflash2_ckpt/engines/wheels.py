"""Read engine releases' Python source straight from their wheels, without installing them.

A wheel is a zip archive; `pip download --no-deps -d DIR vllm==0.33.0` puts one in DIR. The profiles'
citations (released.py) name files inside these wheels, and the `released` tests read them from the
directory named by DFLASH2_WHEELS (default ~/.cache/dflash2-ckpt/wheels).

Maintainer commands:
  python -m dflash2_ckpt.engines.wheels requirements          # the `dist==version` every citation needs
  python -m dflash2_ckpt.engines.wheels have vllm==0.33.0      # exit 0 when that wheel is downloaded
  python -m dflash2_ckpt.engines.wheels review vllm==0.34.0 [--since 0.33.0]
      # the DFlash-related files of a release, marked new / changed / same against an earlier one
"""
from __future__ import annotations

import argparse
import functools
import hashlib
import os
import re
import sys
import tarfile
import zipfile
from pathlib import Path
from typing import Iterator, Sequence

from .released import SDISTS

DEFAULT_DIR = Path("~/.cache/dflash2-ckpt/wheels").expanduser()

# file names worth a look when an engine releases: the DFlash model code, its speculative decoding glue
RELATED = re.compile(r"dflash|speculators|spec_decode|speculative|drafters|assistant", re.IGNORECASE)


def wheel_dir() -> Path:
    env = os.environ.get("DFLASH2_WHEELS")
    return Path(env).expanduser() if env else DEFAULT_DIR


def _norm(dist: str) -> str:
    return re.sub(r"[-_.]+", "_", dist).lower()


def find_wheel(dist: str, version: str, root: Path | None = None) -> Path | None:
    """The downloaded wheel of `dist==version` in `root`, or None when it is not there."""
    root = wheel_dir() if root is None else root
    if not root.is_dir():
        return None
    prefix = f"{_norm(dist)}-{version}-"
    for p in sorted(root.iterdir()):
        if p.suffix == ".whl" and p.name.lower().startswith(prefix):
            return p
    return None


def engine_cache() -> Path:
    """Where scripts/llama_cpp.py keeps its downloads and builds."""
    return Path(os.environ.get("DFLASH2_CKPT_ENGINE_CACHE") or "~/.cache/dflash2-ckpt").expanduser()


def find_sdist(dist: str, version: str, root: Path | None = None) -> Path | None:
    """The downloaded source distribution of `dist==version` (a .tar.gz): in `root` (default the wheel
    directory), else where scripts/llama_cpp.py put it; None when it is in neither."""
    name = f"{_norm(dist)}-{version}.tar.gz"
    dirs = [wheel_dir() if root is None else root]
    if dist in SDISTS:
        build = version.split(".")[0]
        dirs.append(engine_cache() / SDISTS[dist][1].format(build=build) / "dist")
    for d in dirs:
        if (d / name).is_file():
            return d / name
    return None


def find_release(dist: str, version: str, root: Path | None = None) -> Path | None:
    """The archive a citation of `dist==version` is read from: its source distribution or its wheel."""
    return find_sdist(dist, version, root) if dist in SDISTS else find_wheel(dist, version, root)


SDIST_TEXT = (".c", ".cpp", ".h", ".hpp", ".py", ".md", ".txt", ".json")


@functools.lru_cache(maxsize=2)
def _sdist_texts(archive: Path, inner: str) -> dict[str, str]:
    """path inside the project tree -> text, for the source files of the archive: read in one pass, as a
    compressed tar has no random access (cited files are source text, none near 4 MiB)."""
    out = {}
    with tarfile.open(archive) as tar:
        for m in tar:
            _, _, rest = m.name.partition("/")
            if m.isfile() and m.size < 4 << 20 and rest.startswith(inner) and rest.endswith(SDIST_TEXT):
                f = tar.extractfile(m)
                if f is not None:
                    out[rest[len(inner):]] = f.read().decode("utf-8", errors="replace")
    return out


def read_member(archive: Path, path: str) -> str | None:
    """The text of one file inside a wheel (path inside the wheel) or a source distribution (path inside the
    project tree, e.g. src/models/dflash.cpp), or None when it has no such file."""
    if archive.name.endswith(".tar.gz"):
        dist = next((d for d in SDISTS if archive.name.startswith(_norm(d) + "-")), None)
        return _sdist_texts(archive, SDISTS[dist][0] if dist else "").get(path)
    with zipfile.ZipFile(archive) as z:
        try:
            return z.read(path).decode("utf-8", errors="replace")
        except KeyError:
            return None


def related_files(wheel: Path) -> Iterator[tuple[str, str]]:
    """(path, sha256) of every Python file in the wheel whose path looks DFlash / speculative related."""
    with zipfile.ZipFile(wheel) as z:
        for info in z.infolist():
            if info.filename.endswith(".py") and RELATED.search(info.filename):
                yield info.filename, hashlib.sha256(z.read(info)).hexdigest()


def review(dist: str, version: str, since: str | None, root: Path) -> list[str]:
    wheel = find_wheel(dist, version, root)
    if wheel is None:
        raise FileNotFoundError(f"no {dist}=={version} wheel in {root}; fetch it with "
                                f"`pip download --no-deps -d {root} {dist}=={version}`")
    old: dict[str, str] = {}
    if since is not None:
        prev = find_wheel(dist, since, root)
        if prev is None:
            raise FileNotFoundError(f"no {dist}=={since} wheel in {root}; fetch it with "
                                    f"`pip download --no-deps -d {root} {dist}=={since}`")
        old = dict(related_files(prev))
    lines = []
    new = dict(related_files(wheel))
    for path, digest in sorted(new.items()):
        mark = "" if since is None else ("new     " if path not in old else
                                         "changed " if old[path] != digest else "same    ")
        lines.append(f"{mark}{path}")
    lines += [f"removed {p}" for p in sorted(set(old) - set(new))]
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m dflash2_ckpt.engines.wheels", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    sub.add_parser("requirements", help="print the dist==version of every cited release")
    hv = sub.add_parser("have", help="exit 0 when the dist==version wheel is downloaded")
    hv.add_argument("release")
    hv.add_argument("--dir", type=Path, default=None)
    rv = sub.add_parser("review", help="list a release's DFlash-related files")
    rv.add_argument("release", help="dist==version, e.g. vllm==0.34.0")
    rv.add_argument("--since", help="an earlier version of the same dist to compare against")
    rv.add_argument("--dir", type=Path, default=None, help=f"wheel directory (default: $DFLASH2_WHEELS or {DEFAULT_DIR})")
    args = ap.parse_args(argv)
    if args.cmd == "requirements":
        from .released import requirements
        print("\n".join(requirements()))
        return 0
    dist, sep, version = args.release.partition("==")
    if not sep or not version:
        print(f"error: name the release as dist==version (got {args.release!r})", file=sys.stderr)
        return 2
    if args.cmd == "have":
        return 0 if find_release(dist, version, args.dir) else 1
    try:
        print("\n".join(review(dist, version, args.since, args.dir or wheel_dir())))
    except FileNotFoundError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
