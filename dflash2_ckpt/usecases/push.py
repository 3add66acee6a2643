"""The pre-upload gate: verify (and optionally smoke) a local checkpoint, upload it only when it passes.

Nothing reaches the Hub before the checks have passed: a refused push sends no request at all, so a
broken drafter never lands on a branch that someone else may already be serving from.
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, ClassVar, Iterable, Sequence

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
from .push_plan import FilePlan, card_diff, file_plan, local_files

__all__ = ["PushOptions", "PushResult", "push"]

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
    dry_run: bool = False               # nothing was sent: `plan` and `card_diff` say what a push would do
    plan: FilePlan | None = None
    card_diff: str | None = None        # unified diff of README.md against the Hub's (None: card not touched)
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
        return not (self.uploaded or (self.dry_run and self.refused_by is None))

    def to_json(self) -> dict[str, Any]:
        checked = self.check.to_json()
        smoke = checked.pop("smoke", None)
        return {"repo": self.repo, "uploaded": self.uploaded, "refused_by": self.refused_by,
                "commit_url": self.commit_url, "commit_sha": self.commit_sha, "pr_url": self.pr_url,
                "excluded": list(self.excluded), "created": self.created,
                "card": {"metadata": self.card_metadata, "findings": [f.to_json() for f in self.card]},
                "verify": checked, "smoke": smoke, "dry_run": self.dry_run,
                "plan": self.plan.to_json() if self.plan else None, "card_diff": self.card_diff}


@dataclass(frozen=True)
class PushOptions:
    """How to push, one object (the command's flags).

    `revision`: the branch to commit to (or the one in the repo id); `create_pr`: open a pull request.
    `smoke`, `strict`, `select`, `ignore`, `target`, `engines`: the checks that gate the upload, as verify
    takes them. `token`: else HF_TOKEN or `hf auth login`'s. `path_in_repo`: upload into this folder (a
    subfolder in the repo id wins); `commit_message`: else one that names the checks. Pickle files
    (.bin / .pt / ...) are left out unless `include_pickles`. `card`: check README.md's front matter against
    the config and complete it, with `accept_table` (markdown from `accept --format markdown`) between its
    markers. `private`: a repository created by the push is private. `include` / `exclude` / `delete`:
    glob patterns as `hf upload --include / --exclude / --delete` takes them. `dry_run`: the checks run and
    the Hub is read; nothing is written there or in the directory."""

    revision: str | None = None
    create_pr: bool = False
    smoke: bool = False
    strict: bool = False
    token: str | None = None
    path_in_repo: str | None = None
    commit_message: str | None = None
    include_pickles: bool = False
    card: bool = True
    accept_table: str | None = None
    private: bool = False
    dry_run: bool = False
    include: Sequence[str] = ()
    exclude: Sequence[str] = ()
    delete: Sequence[str] = ()
    select: Iterable[str] = ()
    ignore: Iterable[str] = ()
    target: str | None = None
    engines: Iterable[str] = ()


def push(directory: str | os.PathLike[str], repo: str, options: PushOptions | None = None, **kw: Any) -> PushResult:
    """Verify `directory`, then upload it to `repo` (`org/name[@rev][/subfolder]`) if and only if it passes.

    `options` (or the same names as keywords): PushOptions. A push with no token found raises
    HubAccessError before any request. With `card` (and no subfolder: the card is the repository's) a
    contradiction in README.md's front matter refuses the push; the completed file is written in
    `directory` just before the upload. A repository that does not exist is created (private with
    `private`), as `hf upload` does; deletion spares what is uploaded. A dry run's result holds the file
    plan and the card's diff against the Hub's."""
    o = options if options is not None else PushOptions(**kw)
    settings = hub_settings()
    ref = parse_repo_ref(repo, settings["endpoint"])
    if ref is None:
        raise SourceError("not a Hub repo id", path=repo, hint="give the destination as org/name")
    revision = ref.one_revision(o.revision, repo)
    path_in_repo = ref.subfolder or o.path_in_repo
    src = LocalSource(directory)
    _refuse_escaping_links(Path(src.root))
    checked = check(src.root, smoke=o.smoke, strict=o.strict, select=o.select, ignore=o.ignore, target=o.target,
                    engines=o.engines)
    if checked.failed(o.strict):
        refused_by = "verify" if checked.verify.failed(o.strict) else "smoke"
        return PushResult(checked, repo, refused_by=refused_by)
    summary = checked.verify.summary
    plan = None
    if o.card and not path_in_repo:
        from .model_card import plan_card
        plan = plan_card(src.root, summary.get("version"), summary.get("dialect"), accept_table=o.accept_table,
                         repo_id=ref.repo_id)
        if any(f.severity == "error" for f in plan.findings):
            return PushResult(checked, repo, refused_by="card", card=plan.findings, card_metadata=plan.metadata)
    return _to_hub(o, repo, Where(ref.repo_id, revision, settings["endpoint"], repo), Path(src.root), checked,
                   plan, path_in_repo, settings)


def _to_hub(o: PushOptions, repo: str, where: Where, root: Path, checked: CheckResult, plan: Any,
            path_in_repo: str | None, settings: dict[str, Any]) -> PushResult:
    """The checks passed: the repository found (or created), the card completed, then the upload (or, for
    a dry run, the plan against what the Hub holds)."""
    from huggingface_hub import HfApi
    token = o.token or _stored_token()
    if not token and not settings["offline"] and not o.dry_run:
        raise HubAccessError("no Hugging Face token found: pushing needs one with write access (nothing was "
                             "uploaded; the checks passed)", repo_id=where.repo_id, path=repo,
                             hint="run `hf auth login`, set HF_TOKEN, or pass --token")
    api = HfApi(endpoint=where.endpoint, token=token)
    created = False
    try:
        _preflight(where, token, offline=settings["offline"])
    except RepositoryNotFoundError:
        if where.revision not in (None, "main"):
            raise
        if not o.dry_run:
            _create(api, where, o.private)   # as `hf upload` does; then the upload makes the first commit
        created = True
    summary = checked.verify.summary
    if plan is not None and "license" not in plan.metadata:
        # the target's license is read only now: a card refused above sends no request at all
        from .model_card import plan_card
        plan = plan_card(root, summary.get("version"), summary.get("dialect"), accept_table=o.accept_table,
                         repo_id=where.repo_id, license=_target_license(settings))
    excluded = () if o.include_pickles else tuple(
        f.relative_to(root).as_posix() for f in sorted(root.rglob("*"))
        if f.is_file() and f.name.endswith(PICKLE_SUFFIXES))
    ignore = IGNORE_PATTERNS + ([] if o.include_pickles else PICKLE_PATTERNS) + list(o.exclude)
    if o.dry_run:
        return _dry_run(api, where, checked, repo, root, o.include, ignore, o.delete, path_in_repo,
                        plan, excluded, created)
    if plan is not None and plan.changed:
        _write_card(root, plan.text)
    counts = checked.verify.to_json()["counts"]
    message = o.commit_message or (f"Upload drafter checked by dflash2-ckpt ({counts['warning']} warning(s)"
                                   f"{', smoke passed' if o.smoke else ''})")
    try:
        with quiet_hub_logs():
            info = api.upload_folder(repo_id=where.repo_id, folder_path=root, path_in_repo=path_in_repo or None,
                                     revision=where.revision, create_pr=o.create_pr, commit_message=message,
                                     allow_patterns=list(o.include) or None, ignore_patterns=ignore,
                                     delete_patterns=list(o.delete) or None)
    except Exception as e:  # noqa: BLE001 - one line and a hint at the CLI boundary, never a traceback
        raise _with_next_step(from_exception(e, where)) from None
    return PushResult(checked, repo, uploaded=True, commit_url=str(info.commit_url),
                      commit_sha=getattr(info, "oid", None), pr_url=getattr(info, "pr_url", None),
                      excluded=excluded, card=plan.findings if plan else (),
                      card_metadata=plan.metadata if plan else None, created=created)


def _dry_run(api: Any, where: Where, checked: CheckResult, repo: str, root: Path, include: Sequence[str],
             ignore: list[str], delete: Sequence[str], path_in_repo: str | None, card: Any,
             excluded: tuple[str, ...], missing: bool) -> PushResult:
    """The plan against what the Hub holds now (nothing for a repository that does not exist yet)."""
    try:
        with quiet_hub_logs():
            remote = [] if missing else list(api.list_repo_tree(where.repo_id, revision=where.revision,
                                                                recursive=True))
            old = None if missing or card is None or not any(
                getattr(f, "path", None) == "README.md" for f in remote) else _hub_card(api, where)
    except Exception as e:  # noqa: BLE001 - one line and a hint at the CLI boundary, never a traceback
        raise from_exception(e, where) from None
    files = local_files(root, include, ignore, ["README.md"] if card is not None else [])
    overrides = {"README.md": card.text.encode("utf-8")} if card is not None else {}
    plan = file_plan(root, files, remote, path_in_repo, delete, overrides)
    diff = card_diff(old, card.text) if card is not None else None
    return PushResult(checked, repo, dry_run=True, plan=plan, card_diff=diff, excluded=excluded,
                      card=card.findings if card else (), card_metadata=card.metadata if card else None,
                      created=missing)


def _target_license(settings: dict[str, Any]) -> Callable[[str], str | None]:
    """The license on the target's own card (its front matter), or its config's `license`; None when the
    target is not on the Hub or cannot be read: the card then carries no license rather than a guess."""
    def look(target: str) -> str | None:
        from huggingface_hub import HfApi, ModelCard
        api = HfApi(endpoint=settings["endpoint"], token=False)
        for name in ("README.md", "config.json"):
            try:
                with quiet_hub_logs():
                    text = _hub_file(api, target, name)
            except Exception:  # noqa: BLE001 - a gated, private or missing target only leaves the license out
                continue
            if name == "README.md":
                found = getattr(ModelCard(text, ignore_metadata_errors=True).data, "license", None)
            else:
                try:
                    found = json.loads(text).get("license")
                except (ValueError, AttributeError):
                    found = None
            if isinstance(found, str) and found:
                return found
        return None
    return look


def _hub_card(api: Any, where: Where) -> str:
    return _hub_file(api, where.repo_id, "README.md", where.revision)


def _hub_file(api: Any, repo_id: str, name: str, revision: str | None = None) -> str:
    import tempfile
    with tempfile.TemporaryDirectory() as tmp:
        path = api.hf_hub_download(repo_id, name, revision=revision, local_dir=tmp)
        return Path(path).read_text(encoding="utf-8")


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
