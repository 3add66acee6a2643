"""Prompts for the accept run: a JSONL file of {"prompt": text} or {"messages": [...]} lines.

Without a file: the target directory's own prompts.jsonl when it ships one (the bundled tiny pair
does), else a small built-in set of general prompts for real chat models.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import ConfigError, SourceError

MAX_BYTES = 64 << 20
BUILTIN: tuple[dict[str, Any], ...] = (
    {"messages": [{"role": "user", "content": "Explain in a few sentences how a hash table works."}]},
    {
        "messages": [
            {"role": "user", "content": "Write a Python function that returns the n-th Fibonacci number."}
        ]
    },
    {
        "messages": [
            {
                "role": "user",
                "content": "A train travels 120 km in 1.5 hours. What is its average speed? Show your steps.",
            }
        ]
    },
    {"messages": [{"role": "user", "content": "List five tips for writing clear technical documentation."}]},
    {"messages": [{"role": "user", "content": "Summarise the water cycle for a ten-year-old."}]},
)


@dataclass
class Prompt:
    label: str  # "file:line" or "builtin:i"
    ids: list[int]


def read_jsonl(path: Path) -> list[tuple[str, dict[str, Any]]]:
    if not path.is_file():
        raise SourceError("prompts file not found", path=str(path))
    if path.stat().st_size > MAX_BYTES:
        raise SourceError("prompts file is larger than 64 MiB", path=str(path))
    out = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except ValueError as e:
            raise ConfigError(f"line {n} is not JSON: {e}", path=str(path)) from None
        ok = isinstance(row, dict) and (
            isinstance(row.get("prompt"), str)
            or (isinstance(row.get("messages"), list) and all(isinstance(m, dict) for m in row["messages"]))
        )
        if not ok:
            raise ConfigError(
                f'line {n} has neither a "prompt" string nor a "messages" list',
                path=str(path),
                hint='write one {"prompt": "..."} or {"messages": [{"role": ..., "content": ...}]} per line',
            )
        out.append((f"{path.name}:{n}", row))
    if not out:
        raise ConfigError("the prompts file holds no prompt", path=str(path))
    return out


def encode(tokenizer: Any, row: dict[str, Any], label: str) -> list[int]:
    if "messages" in row:
        if not getattr(tokenizer, "chat_template", None):
            raise ConfigError(
                f'{label}: the target\'s tokenizer has no chat template for "messages"',
                hint='give {"prompt": ...} lines for a base model',
            )
        ids = tokenizer.apply_chat_template(row["messages"], add_generation_prompt=True, tokenize=True)
        if isinstance(ids, dict) or hasattr(ids, "keys"):  # newer transformers return a BatchEncoding
            ids = ids["input_ids"]
    else:
        ids = tokenizer(row["prompt"])["input_ids"]
    ids = [int(i) for i in ids]
    if not ids:
        raise ConfigError(f"{label}: the prompt encodes to no token")
    return ids


def prompt_rows(
    prompts: str | os.PathLike[str] | None, target_dir: Path | None, limit: int | None = None
) -> tuple[list[tuple[str, dict[str, Any]]], str]:
    """(labelled rows, where they came from): the file given, else the target's prompts.jsonl, else built-in."""
    if prompts is not None:
        rows, source = read_jsonl(Path(prompts)), str(prompts)
    elif target_dir is not None and (target_dir / "prompts.jsonl").is_file():
        rows, source = read_jsonl(target_dir / "prompts.jsonl"), "target's prompts.jsonl"
    else:
        rows, source = [(f"builtin:{i}", r) for i, r in enumerate(BUILTIN)], "builtin"
    return (rows[:limit] if limit else rows), source


def load_prompts(
    tokenizer: Any, prompts: str | os.PathLike[str] | None, target_dir: Path | None, limit: int | None = None
) -> tuple[list[Prompt], str]:
    """(prompts, where they came from)."""
    rows, source = prompt_rows(prompts, target_dir, limit)
    return [Prompt(label, encode(tokenizer, row, label)) for label, row in rows], source
