"""Engine release archives on disk: find a wheel or source distribution of `dist==version` and read one file
from it, without installing anything (wheels.py is the maintainer command line around these)."""

from __future__ import annotations

import functools
import os
import re
import tarfile
import zipfile
from pathlib import Path

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
                    out[rest[len(inner) :]] = f.read().decode("utf-8", errors="replace")
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
