"""Text layout of `dflash2-ckpt config`: each setting, its value and where it came from."""

from __future__ import annotations

import json
from typing import Any

from rich.console import Console

from .safe_markup import value
from .text import text_renderer


@text_renderer("config")
def render_config(settings: Any, out: Console) -> None:
    doc = settings.to_json()
    out.print(f"settings file: {value(settings.subject)}")
    if doc["path"] is not None:
        matched = ", ".join(f'"{value(g)}"' for g in doc["matched"]) or "none"
        out.print(f"path: {value(doc['path'])} (per-path entries matched: {matched})")
    for key, entry in doc["settings"].items():
        out.print(f"{key:<8} = {value(json.dumps(entry['value'])):<28} # {value(entry['origin'])}")
