"""The one generator of docs/ tables: current on disk, and it notices and repairs a stale table."""

from __future__ import annotations

import shutil
from pathlib import Path

from dflash2_ckpt.dev import doc_tables


def test_every_generated_table_is_current() -> None:
    assert doc_tables.main(["--check"]) == 0, "run python -m dflash2_ckpt.dev.doc_tables"


def test_a_stale_table_is_named_and_regenerated(tmp_path: Path) -> None:
    for page in ("codes.md", "compat.md"):
        shutil.copy(doc_tables.DOCS / page, tmp_path / page)
    codes = tmp_path / "codes.md"
    codes.write_text(codes.read_text().replace("</a>DF106 |", "</a>DF106x |"))
    assert doc_tables.stale(tmp_path) == ["codes.md (codes, code-reference)"]
    for path, text in doc_tables.regenerate(tmp_path).items():
        path.write_text(text)
    assert doc_tables.stale(tmp_path) == []
    assert "</a>DF106 |" in codes.read_text() and "DF106x" not in codes.read_text()


def test_every_code_has_its_section_with_what_breaks_and_the_fix() -> None:
    """A section `### DFNNN name` for every code, in its family's section, with the registry's two texts."""
    from dflash2_ckpt.codes import all_codes, family_of

    page = (doc_tables.DOCS / "codes.md").read_text()
    for c in all_codes():
        assert c.breaks.strip() and c.fix.strip(), f"{c.code}: the registry lacks what breaks / how to fix"
        section = page.split(f"\n### {c.code} {c.name}\n", 1)[1].split("\n### ", 1)[0]
        assert f"- **What breaks:** {c.breaks}" in section and f"- **Fix:** {c.fix}" in section
        prefix, title = family_of(c.code)
        family_heading = (
            page.split(f"\n### {c.code} {c.name}\n", 1)[0].rsplit("\n## ", 1)[1].split("\n", 1)[0]
        )
        assert family_heading == f"{prefix.ljust(5, 'x')}: {title}", c.code
