"""The one generator of every table in docs/ that is written from the code: the finding codes (from the
registry: the table and one section per code) and the engine profiles. Each sits between
`<!-- NAME:start -->` and `<!-- NAME:end -->`.

    python -m dflash2_ckpt.dev.doc_tables           rewrite the tables in place
    python -m dflash2_ckpt.dev.doc_tables --check   exit 1 and name the stale ones (a test runs this)
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

from ..codes import all_codes, family_of, page
from ..codes import markdown_table as codes_table
from .engine_table import engines_table

DOCS = Path(__file__).resolve().parents[2] / "docs"


def codes_reference() -> str:
    """One section per family, one per code under a heading `### DFNNN name` (the table's row keeps the
    short anchor `#dfnnn` that SARIF rules link to), with what breaks and how to fix it, from the registry."""
    out: list[str] = []
    family = None
    for c in all_codes():
        prefix, title = family_of(c.code)
        if prefix != family:
            family = prefix
            out += [f"## {prefix.ljust(5, 'x')}: {title}", ""]
        out += [*page(c), ""]
    return "\n".join(out).rstrip()


# (page, marker name) -> the table's text
TABLES: dict[tuple[str, str], Callable[[], str]] = {
    ("codes.md", "codes"): codes_table,
    ("codes.md", "code-reference"): codes_reference,
    ("compat.md", "engines"): engines_table,
}


def _splice(text: str, name: str, table: str) -> str:
    start, end = f"<!-- {name}:start -->", f"<!-- {name}:end -->"
    a, b = text.index(start) + len(start), text.index(end)
    return text[:a] + "\n" + table + "\n" + text[b:]


def regenerate(docs: Path = DOCS) -> dict[Path, str]:
    """Each page with its tables as the code writes them now."""
    out: dict[Path, str] = {}
    for (file, name), make in TABLES.items():
        path = docs / file
        out[path] = _splice(out.get(path, path.read_text(encoding="utf-8")), name, make())
    return out


def stale(docs: Path = DOCS) -> list[str]:
    return sorted(
        f"{path.name} ({', '.join(n for p, n in TABLES if p == path.name)})"
        for path, text in regenerate(docs).items()
        if path.read_text(encoding="utf-8") != text
    )


def main(argv: list[str]) -> int:
    if "--check" in argv:
        found = stale()
        for s in found:
            print(f"stale: docs/{s}; run python -m dflash2_ckpt.dev.doc_tables", file=sys.stderr)
        return 1 if found else 0
    for path, text in regenerate().items():
        path.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
