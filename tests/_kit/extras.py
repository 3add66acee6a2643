"""Which of the package's extras are installed, read from pyproject.toml: a test that needs one skips,
naming it and what is missing, where only `pip install -e ".[test]"` ran."""

from __future__ import annotations

import re
import sys
from functools import cache
from importlib import metadata
from pathlib import Path

import pytest

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib

PYPROJECT = Path(__file__).resolve().parents[2] / "pyproject.toml"


@cache
def missing(extra: str) -> tuple[str, ...]:
    """The distributions of `extra` that are not installed (by distribution name, as pip installs them)."""
    deps = tomllib.loads(PYPROJECT.read_text())["project"]["optional-dependencies"][extra]
    names = [re.split(r"[\s<>=!~;\[]", d, maxsplit=1)[0] for d in deps]
    out = []
    for name in names:
        try:
            metadata.version(name)
        except metadata.PackageNotFoundError:
            out.append(name)
    return tuple(out)


def reason(extra: str) -> str:
    gone = ", ".join(missing(extra))
    return f"needs the [{extra}] extra ({gone} not installed): pip install -e '.[{extra}]'"


def needs(extra: str) -> pytest.MarkDecorator:
    """Skip unless every distribution of `extra` is installed; the reason names the missing ones."""
    return pytest.mark.skipif(bool(missing(extra)), reason=reason(extra) if missing(extra) else "")
