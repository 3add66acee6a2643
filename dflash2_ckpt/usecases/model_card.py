"""The drafter's model card (README.md front matter), checked and completed with huggingface_hub's
ModelCard / ModelCardData before `push` uploads it.

What a drafter's card should say, from its own config: `base_model` the verifier it drafts for (the
target), `tags` dflash + dflash2 or dflash-v1 + speculative-decoding (how the Hub and engines find
drafters), `library_name` (speculators for the flat dialect that speculators writes, else transformers)
and `pipeline_tag` text-generation. A card that names another base model, or the other DFlash version,
contradicts the config (DF620, error: the Hub would list the drafter under the wrong model); what is
missing is added (DF621, info). An accept τ table (`accept --format markdown`) can be put in the card
between markers, so a later push replaces it instead of adding a second one.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

from ..findings import Finding

EMITS: frozenset[str] = frozenset({"DF620", "DF621"})
CARD = "README.md"
PIPELINE_TAG = "text-generation"
VERSION_TAGS = {"v2": "dflash2", "v1": "dflash-v1"}
BEGIN, END = "<!-- dflash2-ckpt:accept -->", "<!-- /dflash2-ckpt:accept -->"


@dataclass(frozen=True)
class CardPlan:
    text: str                       # the README.md to upload
    metadata: dict[str, Any]        # its front matter
    findings: tuple[Finding, ...]
    changed: bool                   # differs from the README.md on disk (or there was none)


def expected_metadata(config: Mapping[str, Any] | None, version: str | None, dialect: str | None,
                      target: str | None = None) -> dict[str, Any]:
    """The front matter the config calls for (base_model only when the config or --target names one)."""
    tags = ["dflash", *([VERSION_TAGS[version]] if version in VERSION_TAGS else []), "speculative-decoding"]
    out: dict[str, Any] = {"tags": tags, "library_name": "speculators" if dialect == "flat" else "transformers",
                           "pipeline_tag": PIPELINE_TAG}
    base = target_of(config) or target
    if base:
        out["base_model"] = base
    return out


def target_of(config: Mapping[str, Any] | None) -> str | None:
    """The target a drafter names: the speculators verifier, else a recorded base model."""
    if not isinstance(config, Mapping):
        return None
    spec_cfg = config.get("speculators_config")
    if isinstance(spec_cfg, Mapping) and isinstance(spec_cfg.get("verifier"), Mapping):
        name = spec_cfg["verifier"].get("name_or_path")
        if isinstance(name, str) and name:
            return name
    for key in ("base_model", "target_model", "target_model_name_or_path"):
        if isinstance(config.get(key), str):
            return str(config[key])
    return None


def _as_list(v: Any) -> list[str]:
    return [str(x) for x in v] if isinstance(v, (list, tuple)) else ([str(v)] if v else [])


def plan_card(directory: str | Path, version: str | None, dialect: str | None, *, target: str | None = None,
              accept_table: str | None = None) -> CardPlan:
    """Read DIRECTORY/README.md (if any), judge its front matter against the config, and complete it."""
    from huggingface_hub import ModelCard, ModelCardData
    root = Path(directory)
    try:
        config = json.loads((root / "config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        config = None
    want = expected_metadata(config if isinstance(config, dict) else None, version, dialect, target)
    path = root / CARD
    original = path.read_text(encoding="utf-8") if path.is_file() else None
    if original is not None and original.lstrip().startswith("---"):
        card = ModelCard(original, ignore_metadata_errors=True)
    else:
        body = original if original is not None else f"# {root.resolve().name}\n"
        card = ModelCard(f"---\n{ModelCardData().to_yaml()}\n---\n{body}")
    data: Any = card.data                  # ModelCardData: attributes per metadata key
    findings: list[Finding] = []
    base, have = want.get("base_model"), _as_list(getattr(data, "base_model", None))
    if base and have and base not in have:
        findings.append(Finding("DF620", f"{CARD} says base_model {', '.join(have)} but config.json drafts for "
                                f"{base}; set base_model: {base} in the card's front matter", file=CARD,
                                field="base_model"))
    tags = _as_list(getattr(data, "tags", None))
    other = {t for v, t in VERSION_TAGS.items() if v != version and version in VERSION_TAGS}
    if other & set(tags):
        findings.append(Finding("DF620", f"{CARD} is tagged {', '.join(sorted(other & set(tags)))} but the "
                                f"drafter is DFlash {version}; remove the tag", file=CARD, field="tags"))
    added = []
    if base and not have:
        data.base_model = base
        added.append(f"base_model: {base}")
    missing_tags = [t for t in want["tags"] if t not in tags]
    if missing_tags:
        data.tags = tags + missing_tags
        added.append(f"tags: {', '.join(missing_tags)}")
    for key in ("library_name", "pipeline_tag"):
        if not getattr(data, key, None):
            setattr(data, key, want[key])
            added.append(f"{key}: {want[key]}")
    if added:
        findings.append(Finding("DF621", f"{CARD} front matter completed: {'; '.join(added)}", file=CARD))
    text = str(card)
    if accept_table is not None:
        text = with_accept_table(text, accept_table)
    return CardPlan(text, dict(data.to_dict()), tuple(findings), text != original)


def with_accept_table(text: str, table: str) -> str:
    """The τ table between its markers: replaced where the card has it, else appended."""
    block = f"{BEGIN}\n{table.strip()}\n{END}"
    start, end = text.find(BEGIN), text.find(END)
    if start != -1 and end > start:
        return text[:start] + block + text[end + len(END):]
    return text.rstrip("\n") + "\n\n" + block + "\n"
