"""A drafter in a subfolder: when the folder asked for is not a drafter (a target repo with the drafter
in `dflash/`, say), find the one subfolder that is, for local directories and Hub repos alike.

Exactly one: it is used, and a DF612 info finding says which and how to name it. Several: an
AmbiguousSubfolderError lists them (exit 3). Choosing one silently would report on a drafter the user
may not have meant, and reporting DF304 against the root would fail a CI job over a checkpoint nobody
asked about; "which one?" with the candidates is the answer that lets the user go on.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TypeVar

from ..errors import AmbiguousSubfolderError, HubError, SourceError
from ..findings import Finding
from ..formats.detect import detect
from ..formats.parse import load_config
from ..sources.local import Source, read_small
from ..sources.names import CONFIG

EMITS: frozenset[str] = frozenset({"DF612"})

MAX_CANDIDATES = 32  # folders holding a config.json that are read; bounds the requests on a Hub repo
_LOCAL_DEPTH = 3  # how deep a local directory is searched
_SKIP = {"__pycache__", "node_modules"}

S = TypeVar("S", bound=Source)


def _drafter_config(source: Source) -> tuple[bool, str]:
    """Whether the folder's config.json describes a drafter (DFlash or another kind), and what it is."""
    if CONFIG not in source.list_files():
        return False, "no config.json"
    try:
        cfg, _ = load_config(read_small(source, CONFIG))
    except HubError:
        # the network, not the folder: trying the next folder would only spend the deadline again
        raise
    except SourceError:
        return False, "config.json unreadable"
    if cfg is None:
        return False, "config.json is not a JSON object"
    det = detect(cfg)
    if det.is_dflash or det.other is not None:
        return True, "a drafter"
    archs = cfg.get("architectures")
    what = (
        archs[0] if isinstance(archs, list) and archs and isinstance(archs[0], str) else cfg.get("model_type")
    )
    return False, f"config.json describes {what}" if what else "config.json describes no drafter"


def config_folders(paths: Iterable[str]) -> list[str]:
    """Folders (below the root) that hold a config.json, from a recursive file listing."""
    out = {p.rsplit("/", 1)[0] for p in paths if p.endswith("/" + CONFIG)}
    return sorted(f for f in out if not any(part.startswith(".") for part in f.split("/")))


def local_config_folders(root: Path) -> list[str]:
    """The same for a directory on disk, searched `_LOCAL_DEPTH` levels deep (hidden folders skipped)."""
    found: list[str] = []
    for here, dirs, files in os.walk(root):
        rel = Path(here).relative_to(root)
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in _SKIP)
        if len(rel.parts) >= _LOCAL_DEPTH:
            dirs[:] = []
        if rel.parts and CONFIG in files:
            found.append(rel.as_posix())
        if len(found) >= MAX_CANDIDATES:
            break
    return sorted(found)


def locate_drafter(root: S, folders: Callable[[], list[str]], open_sub: Callable[[str], S]) -> S:
    """`root` if it is a drafter or no subfolder is; else the one subfolder that is, with a DF612 note.

    `folders` lists the candidate subfolders; it is only called when the root is not a drafter.
    """
    is_drafter, what = _drafter_config(root)
    if is_drafter:
        return root
    hits: list[tuple[str, S]] = []
    for folder in folders()[:MAX_CANDIDATES]:
        sub = open_sub(folder)
        if _drafter_config(sub)[0]:
            hits.append((folder, sub))
    if not hits:
        return root
    if len(hits) > 1:
        names = [f for f, _ in hits]
        raise AmbiguousSubfolderError(
            f"{root.label} is not a drafter ({what}) and {len(names)} subfolders are: {', '.join(names)}",
            candidates=names,
            path=root.label,
            hint=f"name one with --subfolder, e.g. --subfolder {names[0]}",
        )
    folder, sub = hits[0]
    note = Finding(
        "DF612",
        f"{root.label} is not a drafter ({what}); checked the drafter in its subfolder "
        f"{folder}/ instead (pass --subfolder {folder} to name it)",
        details={"subfolder": folder, "root": root.label},
    )
    # the Source protocol reads notes (a read-only property to mypy); this source is the one that has them
    setattr(sub, "notes", (note,))  # noqa: B010
    return sub
