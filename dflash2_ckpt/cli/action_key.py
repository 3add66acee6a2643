"""The cache key of the GitHub Action's install (action.yml's `key` step), run as a script by the runner's
interpreter before the toolkit is installed: standard library only, no import of the package.

The key names the package version and a digest of the action's own files (a ref that moved keeps no stale
install), and the runner, interpreter and $RUNNER_TEMP the venv was built for (a venv is tied to its
interpreter and its path). Printed to stdout, appended as `key=...` to $GITHUB_OUTPUT when it is set.
"""

from __future__ import annotations

import hashlib
import os
import platform
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]  # the action's checkout ($GITHUB_ACTION_PATH)
SUFFIXES = (".py", ".toml", ".json", ".typed")


def version(root: Path) -> str:
    found = re.search(
        r'^version\s*=\s*"([^"]+)"', (root / "pyproject.toml").read_text(encoding="utf-8"), re.M
    )
    return found.group(1) if found else "unknown"


def digest(root: Path) -> str:
    """Names and contents of what `pip install` builds from: pyproject.toml and the package's files."""
    h = hashlib.sha256()
    files = [
        root / "pyproject.toml",
        *(
            p
            for p in (root / "dflash2_ckpt").rglob("*")
            if p.is_file() and p.suffix in SUFFIXES and "__pycache__" not in p.parts
        ),
    ]
    for p in sorted(files):
        h.update(p.relative_to(root).as_posix().encode() + b"\0" + p.read_bytes() + b"\0")
    return h.hexdigest()[:16]


def key(root: Path, env: dict[str, str]) -> str:
    where = "\n".join(
        (platform.system(), platform.machine(), sys.version, sys.executable, env.get("RUNNER_TEMP", ""))
    )
    return (
        f"dflash2-ckpt-{version(root)}-{platform.system().lower()}-"
        f"{hashlib.sha256(where.encode()).hexdigest()[:12]}-{digest(root)}"
    )


def main() -> None:
    k = key(ROOT, dict(os.environ))
    print(k)
    if out := os.environ.get("GITHUB_OUTPUT"):
        with open(out, "a", encoding="utf-8") as f:
            f.write(f"key={k}\n")


if __name__ == "__main__":
    main()
