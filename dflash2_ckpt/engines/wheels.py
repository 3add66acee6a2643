"""Read engine releases' Python source straight from their wheels, without installing them.

A wheel is a zip archive; `pip download --no-deps -d DIR vllm==0.33.0` puts one in DIR. The profiles'
citations (released.py) name files inside these wheels, and the `released` tests read them from the
directory named by DFLASH2_WHEELS (default ~/.cache/dflash2-ckpt/wheels).

Maintainer commands:
  python -m dflash2_ckpt.engines.wheels requirements          # the `dist==version` every citation needs
  python -m dflash2_ckpt.engines.wheels have vllm==0.33.0      # exit 0 when that wheel is downloaded
  python -m dflash2_ckpt.engines.wheels review vllm==0.34.0 [--since 0.33.0]
      # the DFlash-related files of a release, marked new / changed / same against an earlier one
  python -m dflash2_ckpt.engines.wheels check vllm==0.34.0 [--dir DIR]
      # which citations hold in that release, the architectures and config keys no profile knows (exit 1)
"""

from __future__ import annotations

import argparse
import hashlib
import sys
import zipfile
from collections.abc import Iterator, Sequence
from pathlib import Path

from .archives import (
    DEFAULT_DIR,
    RELATED,
    SDIST_TEXT,
    engine_cache,
    find_release,
    find_sdist,
    find_wheel,
    read_member,
    wheel_dir,
)
from .released import SDISTS, requirements

__all__ = [
    "DEFAULT_DIR",
    "RELATED",
    "SDISTS",
    "SDIST_TEXT",
    "engine_cache",
    "find_release",
    "find_sdist",
    "find_wheel",
    "read_member",
    "wheel_dir",
    "main",
    "review",
    "related_files",
]


def related_files(wheel: Path) -> Iterator[tuple[str, str]]:
    """(path, sha256) of every Python file in the wheel whose path looks DFlash / speculative related."""
    with zipfile.ZipFile(wheel) as z:
        for info in z.infolist():
            if info.filename.endswith(".py") and RELATED.search(info.filename):
                yield info.filename, hashlib.sha256(z.read(info)).hexdigest()


def review(dist: str, version: str, since: str | None, root: Path) -> list[str]:
    wheel = find_wheel(dist, version, root)
    if wheel is None:
        raise FileNotFoundError(
            f"no {dist}=={version} wheel in {root}; fetch it with "
            f"`pip download --no-deps -d {root} {dist}=={version}`"
        )
    old: dict[str, str] = {}
    if since is not None:
        prev = find_wheel(dist, since, root)
        if prev is None:
            raise FileNotFoundError(
                f"no {dist}=={since} wheel in {root}; fetch it with "
                f"`pip download --no-deps -d {root} {dist}=={since}`"
            )
        old = dict(related_files(prev))
    lines = []
    new = dict(related_files(wheel))
    for path, digest in sorted(new.items()):
        mark = (
            ""
            if since is None
            else ("new     " if path not in old else "changed " if old[path] != digest else "same    ")
        )
        lines.append(f"{mark}{path}")
    lines += [f"removed {p}" for p in sorted(set(old) - set(new))]
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m dflash2_ckpt.engines.wheels",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = ap.add_subparsers(dest="cmd", required=True)
    sub.add_parser("requirements", help="print the dist==version of every cited release")
    hv = sub.add_parser("have", help="exit 0 when the dist==version wheel is downloaded")
    hv.add_argument("release")
    hv.add_argument("--dir", type=Path, default=None)
    rv = sub.add_parser("review", help="list a release's DFlash-related files")
    rv.add_argument("release", help="dist==version, e.g. vllm==0.34.0")
    rv.add_argument("--since", help="an earlier version of the same dist to compare against")
    rv.add_argument(
        "--dir", type=Path, default=None, help=f"wheel directory (default: $DFLASH2_WHEELS or {DEFAULT_DIR})"
    )
    ck = sub.add_parser(
        "check",
        help="what a release changes: citations, architectures, config keys (exit 1: something unknown)",
    )
    ck.add_argument("release", help="dist==version, e.g. vllm==0.34.0")
    ck.add_argument(
        "--dir",
        type=Path,
        default=None,
        help="where the release archive is (default: $DFLASH2_WHEELS, else pip downloads it)",
    )
    args = ap.parse_args(argv)
    if args.cmd == "requirements":
        print("\n".join(requirements()))
        return 0
    dist, sep, version = args.release.partition("==")
    if not sep or not version:
        print(f"error: name the release as dist==version (got {args.release!r})", file=sys.stderr)
        return 2
    if args.cmd == "have":
        return 0 if find_release(dist, version, args.dir) else 1
    if args.cmd == "check":
        from .release_check import check  # lazy: engines.release_check loads only on this path

        try:
            report = check(dist, version, args.dir or wheel_dir())
        except (LookupError, FileNotFoundError, OSError) as e:
            print(f"error: {e}", file=sys.stderr)
            return 2
        print("\n".join(report.lines()))
        return 1 if report.unknown else 0
    try:
        print("\n".join(review(dist, version, args.since, args.dir or wheel_dir())))
    except FileNotFoundError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
