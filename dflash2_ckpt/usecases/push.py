"""The pre-upload gate: verify (and optionally smoke) a local checkpoint, upload it only when it passes.

Nothing reaches the Hub before the checks have passed: a refused push sends no request at all, so a
broken drafter never lands on a branch that someone else may already be serving from.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, Iterable

from ..checkpoint import PICKLE_SUFFIXES
from ..errors import (HubAccessError, HubUnreachableError, RepositoryNotFoundError, RevisionNotFoundError,
                      SourceError, UnsafePathError)
from ..findings import Finding, Verdict
from .verify_smoke import CheckResult, check
from ..sources import LocalSource
from ..sources.hub import hub_settings
from ..sources.hub_errors import Where, from_exception
from ..sources.hub_ref import parse_repo_ref
from ..sources.hub_transport import HubTransport, RetryPolicy, quiet_hub_logs
from .verify import Report

__all__ = ["PushResult", "push"]

# never publish editor, VCS or cache droppings that sit beside a checkpoint
IGNORE_PATTERNS = [".*", "**/.*", "__pycache__", "**/__pycache__/**", "*.pyc", "*.tmp", "*.incomplete"]
# pickles (optimizer.pt, training_args.bin) run code when loaded: left out unless asked for by name
PICKLE_PATTERNS = [p for s in PICKLE_SUFFIXES for p in (f"*{s}", f"**/*{s}")]


@dataclass(frozen=True)
class PushResult(Verdict):
    check: CheckResult
    repo: str
    uploaded: bool = False
    refused_by: str | None = None       # "verify", "smoke" or "card" when nothing was uploaded
    commit_url: str | None = None
    commit_sha: str | None = None
    pr_url: str | None = None
    excluded: tuple[str, ...] = ()      # pickle files left out of the upload
    card: tuple[Finding, ...] = ()      # the model card's findings (DF620 refuses, DF621 says what was added)
    card_metadata: dict[str, Any] | None = None
    created: bool = False               # the repository did not exist and push created it
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
        return self.check.findings + self.card

    def failed(self, strict: bool = False) -> bool:
        return not self.uploaded

    def to_json(self) -> dict[str, Any]:
        checked = self.check.to_json()
        smoke = checked.pop("smoke", None)
        return {"repo": self.repo, "uploaded": self.uploaded, "refused_by": self.refused_by,
                "commit_url": self.commit_url, "commit_sha": self.commit_sha, "pr_url": self.pr_url,
                "excluded": list(self.excluded), "created": self.created,
                "card": {"metadata": self.card_metadata, "findings": [f.to_json() for f in self.card]},
                "verify": checked, "smoke": smoke}


def push(directory: str | os.PathLike[str], repo: str, *, revision: str | None = None, create_pr: bool = False,
         smoke: bool = False, strict: bool = False, token: str | None = None, path_in_repo: str | None = None,
         commit_message: str | None = None, include_pickles: bool = False, card: bool = True,
         accept_table: str | None = None, private: bool = False, select: Iterable[str] = (),
         ignore: Iterable[str] = (), target: str | None = None, engines: Iterable[str] = ()) -> PushResult:
    """Verify `directory`, then upload it to `repo` (`org/name[@rev][/subfolder]`) if and only if it passes.

    Pickle files (.bin / .pt / ...) are left out unless `include_pickles`; a push with no token found
    (argument, HF_TOKEN, `hf auth login`) raises HubAccessError before any request. With `card` (and no
    subfolder: the card is the repository's), README.md's front matter is checked against the config (a
    contradiction refuses the push) and completed, with `accept_table` (markdown from `accept --format
    markdown`) between its markers; the file is written in `directory` just before the upload. A repository
    that does not exist is created (private with `private`), as `hf upload` does."""
    settings = hub_settings()
    ref = parse_repo_ref(repo, settings["endpoint"])
    if ref is None:
        raise SourceError("not a Hub repo id", path=repo, hint="give the destination as org/name")
    revision = ref.one_revision(revision, repo)
    path_in_repo = ref.subfolder or path_in_repo
    src = LocalSource(directory)
    _refuse_escaping_links(Path(src.root))
    checked = check(src.root, smoke=smoke, strict=strict, select=select, ignore=ignore, target=target,
                    engines=engines)
    if checked.failed(strict):
        refused_by = "verify" if checked.verify.failed(strict) else "smoke"
        return PushResult(checked, repo, refused_by=refused_by)
    report = checked.verify
    plan = None
    if card and not path_in_repo:
        from .model_card import plan_card
        summary = report.summary
        plan = plan_card(src.root, summary.get("version"), summary.get("dialect"), accept_table=accept_table)
        if any(f.severity == "error" for f in plan.findings):
            return PushResult(checked, repo, refused_by="card", card=plan.findings, card_metadata=plan.metadata)

    from huggingface_hub import HfApi
    endpoint = settings["endpoint"]
    where = Where(ref.repo_id, revision, endpoint, repo)
    token = token or _stored_token()
    if not token and not settings["offline"]:
        raise HubAccessError("no Hugging Face token found: pushing needs one with write access (nothing was "
                             "uploaded; the checks passed)", repo_id=ref.repo_id, path=repo,
                             hint="run `hf auth login`, set HF_TOKEN, or pass --token")
    api = HfApi(endpoint=endpoint, token=token)
    created = False
    try:
        _preflight(where, token, offline=settings["offline"])
    except RepositoryNotFoundError:
        if revision not in (None, "main"):
            raise
        _create(api, where, private)       # as `hf upload` does; then the upload makes the first commit
        created = True
    excluded = () if include_pickles else tuple(
        f.relative_to(src.root).as_posix() for f in sorted(src.root.rglob("*"))
        if f.is_file() and f.name.endswith(PICKLE_SUFFIXES))
    if plan is not None and plan.changed:
        _write_card(src.root, plan.text)
    counts = report.to_json()["counts"]
    message = commit_message or (f"Upload drafter checked by dflash2-ckpt ({counts['warning']} warning(s)"
                                 f"{', smoke passed' if smoke else ''})")
    try:
        with quiet_hub_logs():
            info = api.upload_folder(repo_id=ref.repo_id, folder_path=src.root, path_in_repo=path_in_repo or None,
                                     revision=revision, create_pr=create_pr, commit_message=message,
                                     ignore_patterns=IGNORE_PATTERNS + ([] if include_pickles else PICKLE_PATTERNS))
    except Exception as e:  # noqa: BLE001 - one line and a hint at the CLI boundary, never a traceback
        raise _with_next_step(from_exception(e, where)) from None
    return PushResult(checked, repo, uploaded=True, commit_url=str(info.commit_url),
                      commit_sha=getattr(info, "oid", None), pr_url=getattr(info, "pr_url", None),
                      excluded=excluded, card=plan.findings if plan else (),
                      card_metadata=plan.metadata if plan else None, created=created)


def _stored_token() -> str | None:
    """The token huggingface_hub would use: HF_TOKEN, or the one `hf auth login` stored."""
    from huggingface_hub import get_token
    return get_token()


def _create(api: Any, where: Where, private: bool) -> None:
    try:
        with quiet_hub_logs():
            api.create_repo(where.repo_id, private=private, exist_ok=True)
    except Exception as e:  # noqa: BLE001 - one typed error with the Hub's reason
        err = from_exception(e, where)
        err.hint = "check the token's write access to the organisation (nothing was uploaded)"
        raise err from None


def _write_card(root: str | os.PathLike[str], text: str) -> None:
    """README.md replaced atomically: a failed write leaves the old card whole."""
    from pathlib import Path
    path = Path(root) / "README.md"
    tmp = path.with_name(".README.md.dflash2-ckpt.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def _refuse_escaping_links(root: Path) -> None:
    """Every link anywhere under `root` must stay inside it. upload_folder follows links, so one to
    /etc/hostname or to a file beside the checkpoint would publish what it points at, although verify
    (which reads only config, index and weights) passed; nothing is uploaded while one exists."""
    top = root.resolve()
    bad: list[str] = []
    for here, dirs, files in os.walk(top):          # links to directories are listed, not followed
        for name in (*dirs, *files):
            p = Path(here) / name
            if not p.is_symlink():
                continue
            target = p.resolve()
            if target != top and top not in target.parents:
                bad.append(f"{p.relative_to(top).as_posix()} -> {os.readlink(p)}")
    if bad:
        raise UnsafePathError(f"{len(bad)} link(s) leave the checkpoint directory: {', '.join(sorted(bad)[:5])}"
                              f"{', ...' if len(bad) > 5 else ''}; push would upload what they point at",
                              path=str(root), hint="replace them with the files themselves, or remove them "
                                                   "(nothing was uploaded)")


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
