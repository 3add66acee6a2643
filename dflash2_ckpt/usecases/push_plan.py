"""What a push would change on the Hub, for `push --dry-run`: the files it would upload, delete or leave
as they are, and the model card's diff against the card on the Hub.

The file selection is upload_folder's own (huggingface_hub's filter_repo_objects over the same allow /
ignore / delete patterns), so the plan names exactly the files the real push would send; "unchanged"
compares content hashes with the Hub's (git blob sha1, or the LFS sha256)."""

from __future__ import annotations

import difflib
import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["FilePlan", "card_diff", "escaping", "exact", "file_plan"]


@dataclass(frozen=True)
class FilePlan:
    upload: tuple[str, ...]  # new or changed on the Hub
    unchanged: tuple[str, ...]  # already there with the same content (upload_folder sends them as no-ops)
    delete: tuple[str, ...]  # on the Hub, matched by --delete and not uploaded
    kept: tuple[str, ...] = ()  # on the Hub, neither uploaded nor deleted: left as they are

    def to_json(self) -> dict[str, list[str]]:
        return {
            "upload": list(self.upload),
            "delete": list(self.delete),
            "unchanged": list(self.unchanged),
            "kept": list(self.kept),
        }


def local_files(
    root: Path, allow: Sequence[str] | None, ignore: Sequence[str], extra: Sequence[str] = ()
) -> list[str]:
    """The files upload_folder would take from `root` (and `extra`, files push writes first), relative,
    with its pattern rules."""
    # heavy: huggingface_hub loads only when this runs
    from huggingface_hub.utils._paths import filter_repo_objects

    rel = sorted({*(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()), *extra})
    return list(
        filter_repo_objects(rel, allow_patterns=list(allow) if allow else None, ignore_patterns=list(ignore))
    )


def _same(path: Path, remote: Any) -> bool:
    if remote.size != path.stat().st_size:
        return False
    data = path.read_bytes()
    if remote.lfs is not None:
        return bool(hashlib.sha256(data).hexdigest() == remote.lfs.sha256)
    return bool(hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest() == remote.blob_id)


def file_plan(
    root: Path,
    files: Sequence[str],
    remote: Sequence[Any],
    path_in_repo: str | None,
    delete_patterns: Sequence[str],
    overrides: dict[str, bytes] | None = None,
    compare: bool = True,
) -> FilePlan:
    """`remote`: the Hub's RepoFile list (empty for a repository push would create). `overrides`: content
    that replaces a local file's (the card push would write). Without `compare` (a real push, which
    hashes the files itself), every selected file counts as uploaded."""
    # heavy: huggingface_hub loads only when this runs
    from huggingface_hub.utils._paths import filter_repo_objects

    prefix = f"{path_in_repo.strip('/')}/" if path_in_repo else ""
    there = {f.path: f for f in remote if hasattr(f, "blob_id")}
    upload: list[str] = []
    unchanged: list[str] = []
    for rel in files:
        dest, have = prefix + rel, there.get(prefix + rel)
        if rel in (overrides or {}):
            data = (overrides or {})[rel]
            same = (
                have is not None
                and have.size == len(data)
                and (
                    hashlib.sha256(data).hexdigest() == have.lfs.sha256
                    if have.lfs is not None
                    else hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest() == have.blob_id
                )
            )
        elif not compare:
            same = False
        else:
            same = have is not None and _same(root / rel, have)
        (unchanged if same else upload).append(dest)
    sent = {prefix + rel for rel in files}
    # upload_folder matches delete patterns against paths relative to path_in_repo, never .gitattributes
    candidates = [
        p[len(prefix) :] for p in there if p.startswith(prefix) and p not in sent and p != ".gitattributes"
    ]
    delete = (
        [prefix + p for p in filter_repo_objects(candidates, allow_patterns=list(delete_patterns))]
        if delete_patterns
        else []
    )
    kept = sorted(p for p in there if p not in sent and p not in set(delete))
    return FilePlan(tuple(upload), tuple(unchanged), tuple(sorted(delete)), tuple(kept))


def escaping(patterns: Sequence[str]) -> list[str]:
    """The patterns that reach outside the folder (or the repository): absolute, or with a `..` part."""
    out = []
    for p in patterns:
        parts = p.replace("\\", "/").split("/")
        if p.startswith(("/", "\\", "~")) or (len(p) > 1 and p[1] == ":") or ".." in parts:
            out.append(p)
    return out


def exact(paths: Sequence[str], path_in_repo: str | None) -> list[str]:
    """Delete patterns that match exactly `paths` (repository paths) and nothing else: relative to
    path_in_repo, as upload_folder matches them, with fnmatch's special characters bracketed."""
    prefix = f"{path_in_repo.strip('/')}/" if path_in_repo else ""
    return ["".join(f"[{c}]" if c in "*?[" else c for c in p[len(prefix) :]) for p in paths]


MAX_DIFF_LINES = 400  # a card diff is read by a person: the rest is counted, not printed
MAX_DIFF_LINE = 400  # characters shown of one line


def card_diff(old: str | None, new: str, name: str = "README.md") -> str:
    """A unified diff from the Hub's card (the whole card, as added lines, when there is none), cut at
    MAX_DIFF_LINES lines of MAX_DIFF_LINE characters each; the cut says how much was left out."""
    lines = difflib.unified_diff(
        (old or "").splitlines(keepends=True),
        new.splitlines(keepends=True),
        fromfile=f"hub/{name}" if old is not None else "/dev/null",
        tofile=f"local/{name}",
    )
    out: list[str] = []
    left = 0
    for line in lines:
        if len(out) >= MAX_DIFF_LINES:
            left += 1
            continue
        line = line.rstrip("\n")
        if len(line) > MAX_DIFF_LINE:
            line = line[:MAX_DIFF_LINE] + f"... ({len(line):,} characters)"
        out.append(line + "\n")
    if left:
        out.append(
            f"... {left:,} more diff line(s) not shown (the card diff is cut at {MAX_DIFF_LINES} lines)\n"
        )
    return "".join(out)
