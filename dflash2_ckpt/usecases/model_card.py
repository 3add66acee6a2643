"""The drafter's model card (README.md front matter), checked and completed with huggingface_hub's
ModelCard / ModelCardData before `push` uploads it.

What a drafter's card should say, from its own config: `base_model` the verifier it drafts for (the
target) with `base_model_relation: adapter` (of the Hub's four relations, the one for a model that runs
only attached to its base: a drafter reads the target's hidden states; "finetune", which the Hub infers
otherwise, would list it as a variant of the target), `license` the target's when known, `tags` dflash +
dflash2 or dflash-v1 + speculative-decoding + draft-model (how the Hub and engines find drafters),
`library_name` only for a library that compat says loads it (transformers or speculators; none when
neither does, so a nested v2 drafter is not labelled with a library that refuses it) and `pipeline_tag`
text-generation. The body says what the drafter is and, between markers replaced on every push, how to
serve it on each engine whose compat verdict is `loads` (the engine's own serve command). A card that names another base model, or the other DFlash version,
contradicts the config (DF620, error: the Hub would list the drafter under the wrong model); what is
missing is added (DF621, info). An accept τ table (`accept --format markdown`) can be put in the card
between markers, so a later push replaces it instead of adding a second one.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..findings import Finding
from ..formats.keys import TOKENIZER_KEY
from .card_markdown import is_repo_id, md_block, md_value
from .card_yaml import MAX_CARD_BYTES, CardYamlError, dump, front_matter

EMITS: frozenset[str] = frozenset({"DF620", "DF621", "DF622", "DF645"})
CARD = "README.md"
PIPELINE_TAG = "text-generation"
VERSION_TAGS = {"v2": "dflash2", "v1": "dflash-v1"}
BEGIN, END = "<!-- dflash2-ckpt:accept -->", "<!-- /dflash2-ckpt:accept -->"
SERVE_BEGIN, SERVE_END = "<!-- dflash2-ckpt:serve -->", "<!-- /dflash2-ckpt:serve -->"
RELATION = "adapter"
LIBRARIES = ("transformers", "speculators")  # compat engines that are Hub libraries, preferred first


@dataclass(frozen=True)
class CardPlan:
    text: str  # the README.md to upload
    metadata: dict[str, Any]  # its front matter
    findings: tuple[Finding, ...]
    changed: bool  # differs from the README.md on disk (or there was none)


@dataclass(frozen=True)
class Serving:
    """compat's answer for the card: the engines that load the drafter and their serve commands."""

    loads: tuple[str, ...]  # engine names whose newest verdict is `loads`
    commands: tuple[tuple[str, str], ...]  # (engine with versions, serve command)


def expected_metadata(
    config: Mapping[str, Any] | None,
    version: str | None,
    dialect: str | None,
    target: str | None = None,
    loads: Iterable[str] = (),
    license: str | None = None,
) -> dict[str, Any]:
    """The front matter the config calls for (base_model only when the config or --target names one,
    library_name only for a library in `loads`, license only when known)."""
    tags = [
        "dflash",
        *([VERSION_TAGS[version]] if version in VERSION_TAGS else []),
        "speculative-decoding",
        "draft-model",
    ]
    out: dict[str, Any] = {"tags": tags, "pipeline_tag": PIPELINE_TAG}
    library = next((lib for lib in LIBRARIES if lib in set(loads)), None)
    if library:
        out["library_name"] = library
    base = target_of(config) or target
    if base:
        out["base_model"] = base
        out["base_model_relation"] = RELATION
    if license:
        out["license"] = license
    return out


def serving(directory: str | Path, repo_id: str | None, target: str | None) -> Serving:
    """compat on the checkpoint (header-level); each engine's serve command names the drafter by its Hub
    id (`repo_id`), as a reader of the card would use it, and the target as the card's base_model."""

    from ..checkpoint import open_checkpoint  # lazy: checkpoint loads only on this path
    from ..checkpoint.drafter import drafter_of  # lazy: checkpoint.drafter loads only on this path
    from .compat import compat  # lazy: usecases.compat loads only on this path

    ckpt = open_checkpoint(directory)
    report = compat(ckpt, target=target)
    d = dataclasses.replace(drafter_of(ckpt, target=target), path=repo_id or ckpt.label)
    block = d.spec.block_size if d.spec is not None else None
    newest: dict[str, Any] = {}
    for v in report.verdicts:  # profiles run oldest to newest per engine
        newest[v.profile.engine] = v
    loads = tuple(e for e, v in newest.items() if v.verdict == "loads")
    commands = []
    for e in loads:
        p = newest[e].profile
        cmd = p.serve(d, block) if p.serve is not None else None
        if cmd:
            commands.append((f"{p.label} {p.versions.label}", cmd))
    return Serving(loads, tuple(commands))


def body(
    name: str,
    version: str | None,
    dialect: str | None,
    base: str | None,
    serve: Serving,
    tool_version: str,
    tokenizer: str | None = None,
) -> str:
    """The card's text for a drafter that has none: what it is, how to serve it, what checked it, and the
    digest of the target tokenizer it was converted against (checkpoint/tokenizer.py), when recorded. Every
    value from the config or the folder is shown inert (report/safe_markdown.py): a base model is a link
    only when it is a Hub repo id, and a tokenizer record only when it is a digest."""
    from ..checkpoint.tokenizer import recorded  # lazy: checkpoint.tokenizer loads only on this path

    what = f"DFlash{'2' if version == 'v2' else ''} ({version or 'unknown version'}, {dialect or 'unknown'} dialect)"
    target = (
        (f"[{base}](https://huggingface.co/{base})" if is_repo_id(base) else md_value(base))
        if base
        else "its target model"
    )
    tokenizer = recorded(tokenizer)
    title = name if is_repo_id(name) else md_value(name)
    return (
        f"# {title}\n\nA {what} speculative-decoding draft model for {target}. It proposes blocks of "
        "tokens "
        "that the target verifies in one forward, so it runs together with the target, never alone, and "
        "the output is the target's own.\n\n"
        + serve_block(serve)
        + f"\n\nChecked with dflash2-ckpt {tool_version} (`dflash2-ckpt verify` passed before upload).\n"
        + (
            f"\nTarget tokenizer: `sha256:{tokenizer}` (dflash2-ckpt tokenizer fingerprint v1; `dflash2-ckpt "
            "verify DRAFTER --target TARGET` compares it with your target's).\n"
            if tokenizer
            else ""
        )
    )


def serve_block(serve: Serving) -> str:
    lines = [SERVE_BEGIN, "## Serving", ""]
    if serve.commands:
        for engine, cmd in serve.commands:
            lines += [f"{engine}:", "", md_block(cmd, "bash"), ""]
    else:
        lines += [
            "No engine serve command is known to load this drafter as it is (see `dflash2-ckpt compat`).",
            "",
        ]
    return "\n".join(lines) + SERVE_END


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


def plan_card(
    directory: str | Path,
    version: str | None,
    dialect: str | None,
    *,
    target: str | None = None,
    accept_table: str | None = None,
    repo_id: str | None = None,
    license: Callable[[str], str | None] | None = None,
) -> CardPlan:
    """Read DIRECTORY/README.md (if any), judge its front matter against the config, and complete it.
    `license(base_model)`: the target's license when it can be found (push reads the target's card)."""
    from huggingface_hub import ModelCard, ModelCardData  # heavy: huggingface_hub loads only when this runs

    from ..version import package_version  # lazy: version loads only on this path

    root = Path(directory)
    try:
        config = json.loads((root / "config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        config = None
    cfg = config if isinstance(config, dict) else None
    base_model = target_of(cfg) or target
    serve = serving(root, repo_id, base_model)
    path = root / CARD
    try:
        original = read_card(path)
        if original is not None:
            front_matter(original)  # bounded (card_yaml.py) before ModelCard's yaml.safe_load sees it
    except CardYamlError as e:  # refuses the push (DF645 is an error); the card is left as it is
        return CardPlan("", {}, (unreadable(e),), False)
    if original is not None and original.lstrip().startswith("---"):
        card = ModelCard(original, ignore_metadata_errors=True)
    else:
        name = repo_id.split("/")[-1] if repo_id else root.resolve().name
        recorded = (cfg or {}).get(TOKENIZER_KEY)
        text = (
            original
            if original is not None
            else body(
                name,
                version,
                dialect,
                base_model,
                serve,
                package_version(),
                recorded if isinstance(recorded, str) else None,
            )
        )
        card = ModelCard(f"---\n{ModelCardData().to_yaml()}\n---\n{text}")
    known = getattr(card.data, "license", None)
    want = expected_metadata(
        cfg,
        version,
        dialect,
        target,
        serve.loads,
        None if known or not base_model or license is None else license(base_model),
    )
    data: Any = card.data  # ModelCardData: attributes per metadata key
    findings: list[Finding] = []
    base, have = want.get("base_model"), _as_list(getattr(data, "base_model", None))
    if base and have and base not in have:
        findings.append(
            Finding(
                "DF620",
                f"{CARD} says base_model {', '.join(have)} but config.json drafts for "
                f"{base}; set base_model: {base} in the card's front matter",
                file=CARD,
                field="base_model",
            )
        )
    tags = _as_list(getattr(data, "tags", None))
    other = {t for v, t in VERSION_TAGS.items() if v != version and version in VERSION_TAGS}
    if other & set(tags):
        findings.append(
            Finding(
                "DF620",
                f"{CARD} is tagged {', '.join(sorted(other & set(tags)))} but the "
                f"drafter is DFlash {version}; remove the tag",
                file=CARD,
                field="tags",
            )
        )
    library = getattr(data, "library_name", None)
    if library in LIBRARIES and library not in serve.loads:
        findings.append(
            Finding(
                "DF622",
                f"{CARD} says library_name: {library} but compat finds that {library} does "
                "not load this drafter; remove library_name (push writes one only for a library "
                "that loads it)",
                file=CARD,
                field="library_name",
            )
        )
    added = []
    if base and not have:
        data.base_model = base
        added.append(f"base_model: {base}")
    missing_tags = [t for t in want["tags"] if t not in tags]
    if missing_tags:
        data.tags = tags + missing_tags
        added.append(f"tags: {', '.join(missing_tags)}")
    for key in ("base_model_relation", "license", "library_name", "pipeline_tag"):
        if key in want and not getattr(data, key, None):
            setattr(data, key, want[key])
            added.append(f"{key}: {want[key]}")
    if added:
        findings.append(Finding("DF621", f"{CARD} front matter completed: {'; '.join(added)}", file=CARD))
    text = with_block(card_text(card), serve_block(serve), SERVE_BEGIN, SERVE_END)
    if accept_table is not None:
        text = with_accept_table(text, accept_table)
    return CardPlan(text, dict(data.to_dict()), tuple(findings), text != original)


def read_card(path: Path) -> str | None:
    """README.md as text, None when there is none; a file past the size cap or not UTF-8 is CardYamlError."""
    if not path.is_file():
        return None
    with open(path, "rb") as f:
        raw = f.read(MAX_CARD_BYTES + 1)
    if len(raw) > MAX_CARD_BYTES:
        raise CardYamlError(f"{CARD} is larger than {MAX_CARD_BYTES:,} bytes")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise CardYamlError(f"{CARD} is not UTF-8 text (byte {e.start})") from None


def unreadable(e: CardYamlError) -> Finding:
    where = f" at line {e.line}" if e.line else ""
    return Finding(
        "DF645",
        f"{CARD}'s front matter cannot be read{where}: {e.why}; fix the YAML between the "
        "`---` lines (no anchors or aliases needed), then push again",
        file=CARD,
        details={"line": e.line} if e.line else {},
    )


def card_text(card: Any) -> str:
    """The card with its front matter written by the safe dumper, the card's own key order first."""
    data = card.data.to_dict()
    order = [k for k in getattr(card, "_original_order", None) or [] if k in data]
    ordered = {**{k: data[k] for k in order}, **{k: v for k, v in data.items() if k not in order}}
    return f"---\n{dump(ordered)}\n---\n{card.text}"


def with_accept_table(text: str, table: str) -> str:
    """The τ table between its markers: replaced where the card has it, else appended."""
    return with_block(text, f"{BEGIN}\n{table.strip()}\n{END}", BEGIN, END)


def with_block(text: str, block: str, begin: str, end_marker: str) -> str:
    """`block` (which starts with `begin` and ends with `end_marker`) replaces the card's, else is appended."""
    start, end = text.find(begin), text.find(end_marker)
    if start != -1 and end > start:
        return text[:start] + block + text[end + len(end_marker) :]
    return text.rstrip("\n") + "\n\n" + block + "\n"
