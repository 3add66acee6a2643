"""The engine table of docs/compat.md, generated from the profiles; dev/doc_tables.py writes it there."""
from __future__ import annotations

from ..engines.registry import PROFILES


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def engines_table() -> str:
    rows = ["| engine | versions | DFlash | reads | causality | taps | draft tokens | sources |",
            "|---|---|---|---|---|---|---|---|"]
    for p in PROFILES:
        tokens = f"`{p.draft_tokens.flag}` = {p.draft_tokens.text}" if p.draft_tokens else "-"
        sources = "; ".join(dict.fromkeys(f.source for f in p.sources))
        rows.append("| " + " | ".join(_cell(c) for c in (
            f"`{p.engine}`", p.versions.label, ", ".join(sorted(p.drafts)), ", ".join(sorted(p.reads)),
            p.causality_text, p.taps, tokens, sources)) + " |")
    return "\n".join(rows)


if __name__ == "__main__":
    print(engines_table())
