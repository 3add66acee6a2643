"""From what the user typed to a Source: a local path, else a Hub repo id or URL, else "no such path"."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import (
    HubAccessError,
    HubUnreachableError,
    OfflineNotCachedError,
    RepositoryNotFoundError,
    SourceError,
)
from ..sources.local import LocalSource, Source
from .discover import config_folders, local_config_folders, locate_drafter

if TYPE_CHECKING:
    from ..sources.hub_ref import RepoRef


def open_source(
    path: str,
    revision: str | None = None,
    token: str | None = None,
    subfolder: str | None = None,
    *,
    require_weights: bool = True,
) -> Source:
    """A local path if it exists; else `org/name[@rev][/subfolder]` or a Hub URL; else "no such path".

    With require_weights (a drafter to check) and no subfolder given, a folder that is not a drafter
    is searched for the one subfolder that is (checkpoint.discover); without it (a --target) the folder
    is opened as given and only its config.json is needed.
    """
    local = Path(os.path.expanduser(path))
    if local.exists():
        if revision:
            raise SourceError(
                "--revision applies to Hub repos, and this is a local path",
                path=path,
                hint="drop --revision, or give the repo id (org/name)",
            )
        src = LocalSource(local / subfolder if subfolder else local)
        if require_weights and not subfolder and local.is_dir():
            return locate_drafter(
                src, lambda: local_config_folders(src.root), lambda f: LocalSource(os.path.join(path, f))
            )
        return src
    # the Hub client code loads only for a path that is no local one
    from ..sources.hub import hub_settings
    from ..sources.hub_ref import parse_repo_ref  # lazy: sources.hub_ref loads only on this path

    ref = (
        None
        if path.startswith((".", "/", "~")) or "\\" in path
        else parse_repo_ref(path, hub_settings()["endpoint"])
    )
    if ref is None:
        raise SourceError(
            "no such file or directory, and not a Hub repo id",
            path=path,
            hint="give a checkpoint directory, or a Hub repo as org/name, org/name@revision or "
            "https://huggingface.co/org/name",
        )
    first = _local_first_part(path)
    if first is not None:
        # `fixtures/nested-v9` where fixtures/ is here: a mistyped local path, not a Hub repo to look up
        raise SourceError(
            f"no such file or directory ({first}/ is here, so this is a local path; the Hub was not asked)",
            path=path,
            hint=f"check the name (ls {first}/), or give the Hub repo as hf://{path}",
        )
    try:
        return _open_hub(path, ref, revision, token, subfolder, require_weights=require_weights)
    except (RepositoryNotFoundError, HubAccessError, HubUnreachableError, OfflineNotCachedError) as e:
        if path.startswith(("hf://", "http://", "https://")):
            raise
        # a bare org/name is also a local path that does not exist: say both were tried
        e.message = f"no such local directory, and as a Hub repo: {e.message}"
        e.hint = (
            f"if you meant a local directory, check its path; {e.hint}"
            if e.hint
            else "if you meant a local directory, check its path"
        )
        raise


def _local_first_part(path: str) -> str | None:
    """The first part of `org/name...` when a local directory of that name exists here, else None. A
    revision (`org/name@rev`) is a Hub reference whatever is here."""
    first = path.split("/", 1)[0]
    hub_only = "@" in path or ":" in first
    return first if "/" in path and first and not hub_only and Path(first).is_dir() else None


def _open_hub(
    path: str,
    ref: RepoRef,
    revision: str | None,
    token: str | None,
    subfolder: str | None,
    *,
    require_weights: bool,
) -> Source:
    from ..sources.hub import HubSource  # lazy: sources.hub loads only on this path

    revision = ref.one_revision(revision, path)
    if ref.subfolder and subfolder and ref.subfolder.strip("/") != subfolder.strip("/"):
        raise SourceError(
            f"two subfolders given: /{ref.subfolder} and --subfolder {subfolder}",
            path=path,
            hint="give the subfolder once",
        )
    folder = ref.subfolder or subfolder
    hub = HubSource(
        ref.repo_id, revision=revision, subfolder=folder, token=token, config_only=not require_weights
    )
    if not require_weights:
        return hub
    if not folder:
        files = hub.repo_files
        hub = locate_drafter(hub, lambda: config_folders(files), hub.sub)
    hub.require_checkpoint()
    # fetch config.json now: a gated repo lists its files to anyone but serves them only to granted
    # tokens, and that must stop the run (exit 3), not turn into findings about unreadable files
    if "config.json" in hub.list_files():
        hub.read_range("config.json", 0, 1)
    return hub
