"""`--statistics`: how many findings of each code a report holds, most frequent first (as text lines or
one JSON list), in place of the findings themselves."""

from __future__ import annotations

import json
import sys
from collections import Counter
from typing import IO, Any

from ..codes import REGISTRY


def counts(report: Any) -> list[dict[str, Any]]:
    """One row per code found: code, name, severity (the code's, or the finding's own), count."""
    found = Counter((f.code, f.severity or REGISTRY[f.code].severity) for f in report.findings)
    return [
        {"code": code, "name": REGISTRY[code].name, "severity": severity, "count": n}
        for (code, severity), n in sorted(found.items(), key=lambda item: (-item[1], item[0]))
    ]


def render(report: Any, fmt: str, stream: IO[str] | None = None) -> None:
    out = stream if stream is not None else sys.stdout
    rows = counts(report)
    if fmt == "json":
        out.write(json.dumps(rows, indent=2) + "\n")
        return
    width = max((len(str(r["count"])) for r in rows), default=1)
    for r in rows:
        out.write(f"{r['count']:>{width}}  {r['code']}  {r['severity']:<7}  {r['name']}\n")
