"""The one version source: the installed distribution's metadata (pyproject.toml's `version`).

Read on first use: importlib.metadata costs about a tenth of a second to import, more than the rest of
`dflash2-ckpt --version`.
"""
from __future__ import annotations

import functools

DISTRIBUTION = "dflash2-ckpt"


@functools.lru_cache(maxsize=1)
def package_version() -> str:
    from importlib.metadata import PackageNotFoundError, version
    try:
        return version(DISTRIBUTION)
    except PackageNotFoundError:        # a source tree on sys.path without an install
        return "0+unknown"
