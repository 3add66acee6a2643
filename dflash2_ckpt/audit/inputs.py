"""What to audit: repo ids, local directories, a list file, and a Hub search, as one ordered list."""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from ..errors import SourceError

# a search that matches half the Hub is a mistake, not an audit
MAX_SEARCH_RESULTS = 2000


@dataclass(frozen=True)
class Item:
    """One drafter to audit, as the user named it."""

    text: str
    kind: Literal["hub", "local"]


def classify(text: str) -> Item:
    """A path that exists is local; anything else is handed to the Hub source (which says if it is not a repo)."""
    return Item(text, "local" if os.path.exists(os.path.expanduser(text)) else "hub")


def read_list_file(path: str | os.PathLike[str]) -> list[str]:
    """One repo id or directory per line; blank lines and `#` comments are skipped."""
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as e:
        raise SourceError(
            f"cannot read the list of drafters: {e}",
            path=str(path),
            hint="give a UTF-8 text file with one repo id or directory per line",
        ) from None
    return [s for s in (line.split("#", 1)[0].strip() for line in lines) if s]


@dataclass(frozen=True)
class SearchQuery:
    """`--hub-search`: free words go to the Hub's search; `tag:`, `author:` filter on the server;
    `arch:` keeps the repos whose config.json lists that architecture (checked on the listing's config)."""

    words: str | None
    tags: tuple[str, ...]
    author: str | None
    architectures: tuple[str, ...]


def parse_query(query: str) -> SearchQuery:
    words: list[str] = []
    tags: list[str] = []
    archs: list[str] = []
    author = None
    for tok in query.split():
        key, sep, value = tok.partition(":")
        if sep and value and key in ("tag", "author", "arch"):
            if key == "tag":
                tags.append(value)
            elif key == "arch":
                archs.append(value)
            else:
                author = value
        else:
            words.append(tok)
    return SearchQuery(" ".join(words) or None, tuple(tags), author, tuple(archs))


def _architectures(config: Any) -> list[str]:
    archs = config.get("architectures") if isinstance(config, dict) else None
    return [a for a in archs if isinstance(a, str)] if isinstance(archs, list) else []


def hub_search(query: str, *, token: str | None = None, limit: int = MAX_SEARCH_RESULTS) -> list[str]:
    """Repo ids from the Hub's model listing (huggingface_hub's paginated list_models)."""
    from huggingface_hub import HfApi  # heavy: huggingface_hub loads only when this runs

    q = parse_query(query)
    if not (q.words or q.tags or q.author or q.architectures):
        raise SourceError(
            "an empty Hub search", path=query, hint='e.g. --hub-search "dflash arch:DFlash2DraftModel"'
        )
    from ..sources.hub import hub_settings  # lazy: sources.hub loads only on this path
    from ..sources.hub_errors import Where, from_exception  # lazy: sources.hub_errors loads only on this path

    endpoint = hub_settings()["endpoint"]
    api = HfApi(endpoint=endpoint, token=token)
    try:
        listed = api.list_models(
            search=q.words,
            filter=list(q.tags) or None,
            author=q.author,
            fetch_config=bool(q.architectures),
            limit=limit,
        )
        out = [
            m.id
            for m in listed
            if not q.architectures or set(q.architectures) & set(_architectures(getattr(m, "config", None)))
        ]
    except Exception as e:  # noqa: BLE001  (one typed error, whatever the client raised)
        raise from_exception(e, Where("", None, endpoint, f"Hub search {query!r}")) from None
    return out


def collect(
    items: Iterable[str] = (),
    *,
    from_file: str | None = None,
    search: str | None = None,
    token: str | None = None,
) -> list[Item]:
    """Every input in the order given, each drafter once."""
    texts = list(items)
    if from_file:
        texts += read_list_file(from_file)
    if search:
        texts += hub_search(search, token=token)
    seen: set[str] = set()
    out = []
    for t in texts:
        if t not in seen:
            seen.add(t)
            out.append(classify(t))
    return out
