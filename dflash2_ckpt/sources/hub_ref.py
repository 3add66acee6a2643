"""What a user may type for a Hub repo: `[hf://]org/name[@revision][/subfolder]` or a Hub web URL."""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import unquote, urlsplit

from ..errors import SourceError

_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
COMMIT_RE = re.compile(r"^[0-9a-f]{40}$")
# hosts whose URLs name a model repo; the configured HF_ENDPOINT's host is accepted too
HUB_HOSTS = frozenset({"huggingface.co", "www.huggingface.co", "hf.co"})


@dataclass(frozen=True)
class RepoRef:
    repo_id: str
    revision: str | None = None
    subfolder: str | None = None

    def one_revision(self, option: str | None, path: str) -> str | None:
        """The revision of `org/name@rev` or of `--revision`; SourceError when both are given and differ."""
        if self.revision and option and self.revision != option:
            raise SourceError(
                f"two revisions given: @{self.revision} and --revision {option}",
                path=path,
                hint="give the revision once",
            )
        return self.revision or option


def _repo_id(org: str, name: str) -> str | None:
    if not (_NAME_RE.match(org) and _NAME_RE.match(name)) or ".." in org + name or "--" in org + name:
        return None
    return f"{org}/{name}"


def _clean(parts: list[str]) -> tuple[bool, str | None]:
    """(valid, folder): the parts joined (None for none); not valid when a part is empty or climbs."""
    if any(p in ("", ".", "..") for p in parts):
        return False, None
    return True, "/".join(parts) or None


def parse_repo_ref(text: str, endpoint: str | None = None) -> RepoRef | None:
    """A RepoRef, or None when `text` is not shaped like a repo id or a model repo URL.

    A revision `refs/pr/N` or `refs/convert/X` keeps its slashes; anything else after the name is a
    subfolder. Single names ("gpt2") are not accepted: too easy to confuse with a mistyped path.
    """
    if text.startswith(("https://", "http://")):
        return parse_hub_url(text, endpoint)
    s = text[len("hf://") :] if text.startswith("hf://") else text
    parts = s.split("/")
    if len(parts) < 2:
        return None
    org, name, rest = parts[0], parts[1], parts[2:]
    revision = None
    if "@" in name:
        name, revision = name.split("@", 1)
        if revision == "refs" and len(rest) >= 2:
            revision, rest = "/".join(["refs", *rest[:2]]), rest[2:]
        if not revision:
            return None
    repo_id, (ok, sub) = _repo_id(org, name), _clean(rest)
    if repo_id is None or not ok:
        return None
    return RepoRef(repo_id, revision, sub)


def parse_hub_url(url: str, endpoint: str | None = None) -> RepoRef | None:
    """`https://huggingface.co/org/name[/tree/REV[/SUB]]`, `/blob/REV/SUB/file`, `/resolve/REV/SUB/file`.

    A file URL (blob, resolve) names the folder the file is in. Dataset and Space URLs are not model
    repos and give None. The revision segment is percent-decoded, as the Hub writes `refs%2Fpr%2F1`.
    """
    u = urlsplit(url)
    hosts = set(HUB_HOSTS)
    if endpoint:
        hosts.add((urlsplit(endpoint).hostname or "").lower())
    if (u.hostname or "").lower() not in hosts:
        return None
    parts = [unquote(p) for p in u.path.split("/")[1:]]
    if parts and parts[-1] == "":
        parts = parts[:-1]  # a trailing slash
    if len(parts) < 2:
        return None
    repo_id = _repo_id(parts[0], parts[1])
    if repo_id is None:
        return None
    rest = parts[2:]
    if not rest:
        return RepoRef(repo_id)
    kind, rest = rest[0], rest[1:]
    if kind not in ("tree", "blob", "resolve") or not rest:
        return None
    revision, rest = rest[0], rest[1:]
    if revision == "refs" and len(rest) >= 2:  # an unencoded refs/pr/N
        revision, rest = "/".join(["refs", *rest[:2]]), rest[2:]
    if kind != "tree":
        if not rest:
            return None
        rest = rest[:-1]  # the file itself: its folder is what is checked
    ok, sub = _clean(rest)
    if not ok or not revision:
        return None
    return RepoRef(repo_id, revision, sub)
