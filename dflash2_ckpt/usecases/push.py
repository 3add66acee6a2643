"""The pre-upload gate: verify (and optionally smoke) a local checkpoint, upload it only when it passes.

Nothing reaches the Hub before the checks have passed: a refused push sends no request at all, so a
broken drafter never lands on a branch that someone else may already be serving from.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, ClassVar

from ..errors import HubUnreachableError, RepositoryNotFoundError, RevisionNotFoundError, SourceError
from ..findings import Finding, Verdict
from .verify_smoke import CheckResult, check, smoke_failed
from ..sources import LocalSource
from ..sources.hub import hub_settings
from ..sources.hub_errors import Where, from_exception
from ..sources.hub_ref import parse_repo_ref
from ..sources.hub_transport import HubTransport, RetryPolicy, quiet_hub_logs
from .verify import Report

__all__ = ["PushResult", "push", "smoke_failed"]

# never publish editor, VCS or cache droppings that sit beside a checkpoint
IGNORE_PATTERNS = [".*", "**/.*", "__pycache__", "**/__pycache__/**", "*.pyc", "*.tmp", "*.incomplete"]


@dataclass(frozen=True)
class PushResult(Verdict):
    check: CheckResult
    repo: str
    uploaded: bool = False
    refused_by: str | None = None       # "verify" or "smoke" when nothing was uploaded
    commit_url: str | None = None
    commit_sha: str | None = None
    pr_url: str | None = None
    kind: ClassVar[str] = "push"

    @property
    def report(self) -> Report:
        return self.check.verify

    @property
    def smoke(self) -> Any:
        return self.check.smoke

    @property
    def subject(self) -> str:
        return self.check.subject

    @property
    def findings(self) -> tuple[Finding, ...]:
        return self.check.findings

    def failed(self, strict: bool = False) -> bool:
        return not self.uploaded

    def to_json(self) -> dict[str, Any]:
        checked = self.check.to_json()
        smoke = checked.pop("smoke", None)
        return {"repo": self.repo, "uploaded": self.uploaded, "refused_by": self.refused_by,
                "commit_url": self.commit_url, "commit_sha": self.commit_sha, "pr_url": self.pr_url,
                "verify": checked, "smoke": smoke}


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
    checked = check(src.root, smoke=smoke, strict=strict)
    if checked.failed(strict):
        refused_by = "verify" if checked.verify.failed(strict) else "smoke"
        return PushResult(checked, repo, refused_by=refused_by)
    report = checked.verify

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
    return PushResult(checked, repo, uploaded=True, commit_url=str(info.commit_url),
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
