"""The pre-upload gate: verify (and optionally smoke) a local checkpoint, upload it only when it passes.

Nothing reaches the Hub before the checks have passed: a refused push sends no request at all, so a
broken drafter never lands on a branch that someone else may already be serving from.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .errors import (HubUnreachableError, MissingDependencyError, RepositoryNotFoundError, RevisionNotFoundError,
                     SourceError)
from .sources import LocalSource
from .sources.hub import hub_settings
from .sources.hub_errors import Where, from_exception
from .sources.hub_ref import parse_repo_ref
from .sources.hub_transport import HubTransport, RetryPolicy, quiet_hub_logs
from .verify import Report, verify

# never publish editor, VCS or cache droppings that sit beside a checkpoint
IGNORE_PATTERNS = [".*", "**/.*", "__pycache__", "**/__pycache__/**", "*.pyc", "*.tmp", "*.incomplete"]


@dataclass(frozen=True)
class PushResult:
    report: Report
    smoke: Any = None                   # what run_smoke returned, when --smoke was given
    uploaded: bool = False
    refused_by: str | None = None       # "verify" or "smoke" when nothing was uploaded
    commit_url: str | None = None
    commit_sha: str | None = None
    pr_url: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"uploaded": self.uploaded, "refused_by": self.refused_by, "commit_url": self.commit_url,
                "commit_sha": self.commit_sha, "pr_url": self.pr_url, "verify": self.report.to_json(),
                "smoke": _jsonable(self.smoke)}


def _jsonable(result: Any) -> Any:
    if result is None:
        return None
    to_json = getattr(result, "to_json", None)
    return to_json() if callable(to_json) else str(result)


def smoke_failed(result: Any, strict: bool = False) -> bool:
    """Whether a smoke result failed, for the result shapes a runner may return (Report-like or bool)."""
    failed = getattr(result, "failed", None)
    if callable(failed):
        try:
            return bool(failed(strict))
        except TypeError:
            return bool(failed())
    if failed is not None:
        return bool(failed)
    passed = getattr(result, "passed", None)
    if passed is not None:
        return not (passed() if callable(passed) else passed)
    return result is False


def _run_smoke(directory: Path) -> Any:
    try:
        from .smoke import run_smoke
    except ImportError as e:
        raise MissingDependencyError(f"--smoke needs the smoke forward, which could not be imported ({e})",
                                     hint="pip install 'dflash2-ckpt[smoke]'") from None
    return run_smoke(directory)


def push(directory: str | os.PathLike[str], repo: str, *, revision: str | None = None, create_pr: bool = False,
         smoke: bool = False, strict: bool = False, token: str | None = None, path_in_repo: str | None = None,
         commit_message: str | None = None) -> PushResult:
    """Verify `directory`, then upload it to `repo` (`org/name[@rev][/subfolder]`) if and only if it passes."""
    settings = hub_settings()
    ref = parse_repo_ref(repo, settings["endpoint"])
    if ref is None:
        raise SourceError("not a Hub repo id", path=repo, hint="give the destination as org/name")
    if ref.revision and revision and ref.revision != revision:
        raise SourceError(f"two revisions given: @{ref.revision} and --revision {revision}", path=repo)
    revision = ref.revision or revision
    path_in_repo = ref.subfolder or path_in_repo
    src = LocalSource(directory)
    report = verify(src)
    if report.failed(strict):
        return PushResult(report, refused_by="verify")
    smoke_result = None
    if smoke:
        smoke_result = _run_smoke(src.root)
        if smoke_failed(smoke_result, strict):
            return PushResult(report, smoke_result, refused_by="smoke")

    from huggingface_hub import HfApi
    endpoint = settings["endpoint"]
    where = Where(ref.repo_id, revision, endpoint, repo)
    _preflight(where, token, offline=settings["offline"])
    api = HfApi(endpoint=endpoint, token=token)
    counts = report.to_json()["counts"]
    message = commit_message or (f"Upload drafter checked by dflash2-ckpt ({counts['warning']} warning(s)"
                                 f"{', smoke passed' if smoke else ''})")
    try:
        with quiet_hub_logs():
            info = api.upload_folder(repo_id=ref.repo_id, folder_path=src.root, path_in_repo=path_in_repo or None,
                                     revision=revision, create_pr=create_pr, commit_message=message,
                                     ignore_patterns=IGNORE_PATTERNS)
    except Exception as e:  # noqa: BLE001 - one line and a hint at the CLI boundary, never a traceback
        raise _with_next_step(from_exception(e, where)) from None
    return PushResult(report, smoke_result, uploaded=True, commit_url=str(info.commit_url),
                      commit_sha=getattr(info, "oid", None), pr_url=getattr(info, "pr_url", None))


def _with_next_step(err: SourceError) -> SourceError:
    """The hint for a destination that is not there: create it (a download hint would be wrong here)."""
    if isinstance(err, RepositoryNotFoundError):
        err.hint = (f"create it first (hf repos create {err.repo_id}), or check the name and the token's "
                    "write access")
    elif isinstance(err, RevisionNotFoundError):
        err.hint = (f"create the branch first (hf repos branch create {err.repo_id} {err.revision}), "
                    "or push to an existing one")
    return err


def _preflight(where: Where, token: str | None, *, offline: bool) -> None:
    """One cheap request before the upload, so that no network, a missing repo or branch, and a refused
    token are one typed error within seconds, not the upload's long retry loop (about 24 s offline)."""
    if offline:
        raise HubUnreachableError("offline mode (HF_HUB_OFFLINE) is on and push needs the Hub",
                                  repo_id=where.repo_id, revision=where.revision, path=where.path,
                                  hint="unset HF_HUB_OFFLINE (nothing was uploaded; the checks passed)")
    from urllib.parse import quote
    url = f"{where.endpoint}/api/models/{where.repo_id}"
    if where.revision:
        url += f"/revision/{quote(where.revision, safe='')}"
    try:
        HubTransport(where, token, RetryPolicy.from_env()).get_json(url)
    except SourceError as e:
        raise _with_next_step(e) from None
