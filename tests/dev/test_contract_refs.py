"""The contract lives in the repository: code, tests and docs cite docs/contract.md by section, every
cited section exists, and nothing cites the documents a clone does not have (CONTRACT §N, ENGINES.md)."""

from __future__ import annotations

import re

from test_docs_pages import anchors

from conftest import ROOT

CONTRACT = ROOT / "docs" / "contract.md"
# one reference may name several sections of the page: the page and its anchor, then more anchors
REF = re.compile(r"docs/contract\.md(#[\w-]+(?:,\s*#[\w-]+)*)")


def _tracked(*suffixes: str) -> dict[str, str]:
    """The repository's own files with these suffixes (no venvs, caches or build output)."""
    skip = {".git", ".venv", "build", "dist", "__pycache__", ".mypy_cache", ".ruff_cache", ".hypothesis"}
    return {
        p.relative_to(ROOT).as_posix(): p.read_text(encoding="utf-8", errors="replace")
        for p in ROOT.rglob("*")
        if p.suffix in suffixes
        and p.is_file()
        and not skip & set(p.relative_to(ROOT).parts)
        and not p.name.endswith(".egg-info")
    }


def test_every_contract_reference_names_a_section_of_the_page() -> None:
    sections = anchors(CONTRACT)
    cited = {
        (f, a)
        for f, text in _tracked(".py", ".md").items()
        for m in REF.findall(text)
        for a in re.findall(r"#([\w-]+)", m)
    }
    assert len(cited) > 20  # the package does cite the page
    assert sorted(c for c in cited if c[1] not in sections) == []


def test_nothing_cites_a_document_outside_the_repository() -> None:
    old = re.compile(r"CONTRACT(?:\.md)? ?§|ENGINES(?:\.md)? ?§|\bENGINES\.md\b|shared/(?:CONTRACT|ENGINES)")
    hits = sorted(
        f"{f}: {m.group(0)}"
        for f, text in _tracked(".py", ".md", ".toml", ".yaml", ".yml").items()
        if f != "tests/dev/test_contract_refs.py"
        for m in old.finditer(text)
    )
    assert hits == []


def test_the_page_covers_the_contract() -> None:
    """The sections a maintainer needs: both dialects and their mapping, causality, tensors, identity, and
    the arithmetic the smoke forward re-computes."""
    assert {
        "the-nested-dialect",
        "dflash_config",
        "the-flat-dialect",
        "nested-and-flat-field-by-field",
        "the-assistant-export-dialect",
        "in-block-causality",
        "tensors",
        "names-seen-in-the-wild",
        "telling-drafters-apart",
        "one-draft-step",
        "grouped-dynamic-convolution",
        "candidates-selector-and-walk",
        "what-the-smoke-forward-checks",
    } <= anchors(CONTRACT)
