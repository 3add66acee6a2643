"""What `dflash2-ckpt engines` lists: every engine, the releases whose code was read, and what each profile
loads (DFlash versions, dialects, named families), as one JSON-ready document (report/engines_out.py renders
it)."""

from __future__ import annotations

from typing import Any

from .checked import engine_span, span
from .registry import ENGINES, by_engine


def engines_document() -> dict[str, Any]:
    out = []
    for engine in ENGINES:
        profiles = by_engine(engine)
        whole = engine_span(profiles)
        rows = []
        for p in profiles:
            own = span(p)
            rows.append(
                {
                    "id": p.id,
                    "versions": p.versions.label,
                    "checked_from": own.first if own else None,
                    "checked_through": own.last if own else None,
                    "drafts": sorted(p.drafts),
                    "reads": sorted(p.reads),
                    "families": list(p.families),
                    "verified": p.verified,
                }
            )
        out.append(
            {
                "engine": engine,
                "label": profiles[0].label,
                "dist": profiles[-1].dist or engine,
                "checked_from": whole.first if whole else None,
                "checked_through": whole.last if whole else None,
                "profiles": rows,
            }
        )
    return {"engines": out}
