"""JSON Schema of each dialect, generated from the pydantic models so the committed files cannot drift."""

from __future__ import annotations

import json
from pathlib import Path

from ..sources.safe_write import write_text
from ..version import REPOSITORY
from .models import MODELS

FILES = {
    "nested-v2.schema.json": ("nested", "v2"),
    "nested-v1.schema.json": ("nested", "v1"),
    "flat-v2.schema.json": ("flat", "v2"),
    "flat-v1.schema.json": ("flat", "v1"),
    "assistant-v1.schema.json": ("assistant", "v1"),
}

# what `inspect` calls a dialect and version ("nested", "v2"), as one name: nested-v2
NAMES = {f"{dialect}-{version}": file for file, (dialect, version) in FILES.items()}


def resolve(name: str) -> str:
    """The schema file for a dialect name: `nested-v2` (as inspect names it), `nested-v2.schema.json` (the
    file), or a dialect with one version (`assistant`). ValueError says which names there are."""
    key = name.strip().lower().removesuffix(".schema.json")
    if key in NAMES:
        return NAMES[key]
    versions = sorted(n for n in NAMES if n.startswith(f"{key}-"))
    if len(versions) == 1:
        return NAMES[versions[0]]
    if versions:
        raise ValueError(f"{name!r} has a schema per version: {', '.join(versions)}")
    if key == "gguf":
        raise ValueError(
            "the gguf dialect has no JSON Schema: its config is GGUF metadata, not a "
            "config.json (docs/llama-cpp.md lists the keys)"
        )
    raise ValueError(f"no dialect {name!r}; the dialects with a schema are {', '.join(NAMES)}")


def generate() -> dict[str, str]:
    out = {}
    for name, key in FILES.items():
        schema = MODELS[key].model_json_schema(mode="validation")
        schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
        schema["$id"] = f"{REPOSITORY}/schemas/{name}"
        out[name] = json.dumps(schema, indent=2, sort_keys=True) + "\n"
    return out


def write(directory: str | Path) -> list[Path]:
    d = Path(directory)
    d.mkdir(parents=True, exist_ok=True)
    written = []
    for name, text in generate().items():
        write_text(d / name, text)  # the write guard: no link, no hard-linked file
        written.append(d / name)
    return written


def stale(directory: str | Path) -> list[str]:
    """Files in `directory` that differ from what the models generate now."""
    d = Path(directory)
    return [
        name
        for name, text in generate().items()
        if not (d / name).is_file() or (d / name).read_text() != text
    ]
