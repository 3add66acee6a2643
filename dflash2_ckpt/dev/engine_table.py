"""The engine table of docs/compat.md, generated from the profiles; dev/doc_tables.py writes it there."""

from __future__ import annotations

from ..engines.profile import Profile
from ..engines.registry import PROFILES


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _sources(p: Profile) -> str:
    """The released files the profile's facts cite (anchors: engines/released.py), else the fact sources."""
    cites = [c for f in p.sources + p.notes for c in f.cites]
    if not cites:
        return "; ".join(dict.fromkeys(f.source for f in p.sources))
    by: dict[str, set[str]] = {}  # a profile may rest on several distributions (mlx-vlm on mlx)
    for c in cites:
        by.setdefault(c.dist, set()).update(c.versions)
    read = "; ".join(
        f"{dist} {', '.join(sorted(vs, key=lambda v: tuple(int(x) for x in v.split('.'))))}"
        for dist, vs in by.items()
    )
    files = ", ".join(f"`{path}`" for path in dict.fromkeys(c.path for c in cites))
    return f"{read}: {files}"


def engines_table() -> str:
    rows = [
        "| engine | versions | DFlash | reads | causality | taps | draft tokens | sources |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for p in PROFILES:
        tokens = f"`{p.draft_tokens.flag}` = {p.draft_tokens.text}" if p.draft_tokens else "-"
        sources = _sources(p)
        rows.append(
            "| "
            + " | ".join(
                _cell(c)
                for c in (
                    f"`{p.engine}`",
                    p.versions.label,
                    ", ".join(sorted(p.drafts)),
                    ", ".join(sorted(p.reads)),
                    p.causality_text,
                    p.taps,
                    tokens,
                    sources,
                )
            )
            + " |"
        )
    return "\n".join(rows)
