"""The one version source: the installed distribution's metadata (pyproject.toml's `version`).

Read on first use: importlib.metadata costs about a tenth of a second to import, more than the rest of
`dflash2-ckpt --version`.
"""

from __future__ import annotations

import functools

DISTRIBUTION = "dflash2-ckpt"
# the project's repository: schema $ids, and the docs of a release (its tag v{version}) that SARIF rules and
# `dflash2-ckpt codes CODE` link to
REPOSITORY = "https://github.com/dflash2-ckpt/dflash2-ckpt"


@functools.lru_cache(maxsize=1)
def package_version() -> str:
    from importlib.metadata import PackageNotFoundError, version  # lazy: importlib loads only on this path

    try:
        return version(DISTRIBUTION)
    except PackageNotFoundError:  # a source tree on sys.path without an install
        return "0+unknown"


def docs_url(page: str) -> str:
    """A page of docs/ as released with this version (the tag v{version}), so a link never shows a
    newer meaning than the tool that printed it; an install without a version links to main."""
    v = package_version()
    ref = "main" if "unknown" in v else f"v{v}"
    return f"{REPOSITORY}/blob/{ref}/docs/{page}"
