"""The pre-upload gate: verify (and optionally smoke) a local checkpoint, upload it only when it passes.

Nothing reaches the Hub before the checks have passed: a refused push sends no request at all, so a
broken drafter never lands on a branch that someone else may already be serving from.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar
from urllib.parse import quote

from ..checkpoint import PICKLE_SUFFIXES
from ..errors import (
    HubAccessError,
    HubUnreachableError,
    RepositoryNotFoundError,
    RevisionNotFoundError,
    SourceError,
    UnsafePathError,
    UsageError,
)
from ..findings import Finding, Verdict
from ..sources import LocalSource
from ..sources.hub import hub_settings
from ..sources.hub_client import bounded_hub_calls
from ..sources.hub_errors import Where, from_exception
from ..sources.hub_ref import parse_repo_ref
from ..sources.hub_transport import HubTransport, RetryPolicy, quiet_hub_logs
from ..sources.safe_write import Inputs, inputs, write_text
from ..sources.safe_write import check as check_write
from .card_yaml import MAX_CARD_BYTES, CardYamlError, front_matter
from .push_plan import FilePlan, card_diff, escaping, exact, file_plan, local_files
from .verify import Report
from .verify_smoke import CheckResult, check

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
    refused_by: str | None = None  # "verify", "smoke" or "card" when nothing was uploaded
    commit_url: str | None = None
    commit_sha: str | None = None
    pr_url: str | None = None
    excluded: tuple[str, ...] = ()  # pickle files left out of the upload
    card: tuple[Finding, ...] = ()  # the model card's findings (DF620 refuses, DF621 says what was added)
    card_metadata: dict[str, Any] | None = None
    created: bool = False  # the repository did not exist and push created it
    dry_run: bool = False  # nothing was sent: `plan` and `card_diff` say what a push would do
    plan: FilePlan | None = None
    card_diff: str | None = None  # unified diff of README.md against the Hub's (None: card not touched)
    unchecked: tuple[str, ...] = ()  # a dry run without the Hub: what it could not check
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
        return {
            "repo": self.repo,
            "uploaded": self.uploaded,
            "refused_by": self.refused_by,
            "commit_url": self.commit_url,
            "commit_sha": self.commit_sha,
            "pr_url": self.pr_url,
            "excluded": list(self.excluded),
            "created": self.created,
            "card": {"metadata": self.card_metadata, "findings": [f.to_json() for f in self.card]},
            "verify": checked,
            "smoke": smoke,
            "dry_run": self.dry_run,
            "plan": self.plan.to_json() if self.plan else None,
            "card_diff": self.card_diff,
            "unchecked": list(self.unchecked),
        }


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
    glob patterns as `hf upload --include / --exclude / --delete` takes them; a pattern that leaves the
    folder (absolute, `..`) is refused. A push that would delete files from the Hub lists them first and
    deletes exactly those, only with `yes` or when `confirm(paths)` says so. `dry_run`: the checks run and
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
    yes: bool = False
    confirm: Callable[[tuple[str, ...]], bool] | None = None


def push(
    directory: str | os.PathLike[str], repo: str, options: PushOptions | None = None, **kw: Any
) -> PushResult:
    """Verify `directory`, then upload it to `repo` (`org/name[@rev][/subfolder]`) if and only if it passes.

    `options` (or the same names as keywords): PushOptions. A push with no token found raises
    HubAccessError before any request. With `card` (and no subfolder: the card is the repository's) a
    contradiction in README.md's front matter refuses the push; the completed file is written in
    `directory` just before the upload (a card rewritten for the push is always among the files uploaded).
    A repository that does not exist is created (private with `private`), as `hf upload` does; deletion
    spares what is uploaded. A dry run's result holds the file plan and the card's diff against the Hub's;
    a real push's result holds its plan too: the files uploaded, deleted and kept."""
    o = options if options is not None else PushOptions(**kw)
    _refuse_escaping_patterns(o.include, o.exclude, o.delete, o.path_in_repo)
    settings = hub_settings()
    ref = parse_repo_ref(repo, settings["endpoint"])
    if ref is None:
        raise SourceError("not a Hub repo id", path=repo, hint="give the destination as org/name")
    revision = ref.one_revision(o.revision, repo)
    path_in_repo = ref.subfolder or o.path_in_repo
    _refuse_escaping_patterns((), (), (), path_in_repo)
    src = LocalSource(directory)
    _refuse_escaping_links(Path(src.root))
    reading = inputs([o.target])
    if o.card and not path_in_repo and not o.dry_run:
        # the card's destination judged before any check or request: a planted link refuses the push
        check_write(
            Path(os.path.abspath(src.root)) / "README.md",
            reading=reading,
            hint="replace README.md with a plain file, or pass --no-card (nothing was uploaded)",
        )
    checked = check(
        src.root,
        smoke=o.smoke,
        strict=o.strict,
        select=o.select,
        ignore=o.ignore,
        target=o.target,
        engines=o.engines,
    )
    if checked.failed(o.strict):
        refused_by = "verify" if checked.verify.failed(o.strict) else "smoke"
        return PushResult(checked, repo, refused_by=refused_by)
    summary = checked.verify.summary
    plan = None
    if o.card and not path_in_repo:
        from .model_card import plan_card  # lazy: usecases.model_card loads only on this path

        plan = plan_card(
            src.root,
            summary.get("version"),
            summary.get("dialect"),
            accept_table=o.accept_table,
            repo_id=ref.repo_id,
        )
        if any(f.severity == "error" for f in plan.findings):
            return PushResult(
                checked, repo, refused_by="card", card=plan.findings, card_metadata=plan.metadata
            )
    return _to_hub(
        o,
        repo,
        Where(ref.repo_id, revision, settings["endpoint"], repo),
        Path(src.root),
        checked,
        plan,
        path_in_repo,
        settings,
        reading,
    )


def _to_hub(
    o: PushOptions,
    repo: str,
    where: Where,
    root: Path,
    checked: CheckResult,
    plan: Any,
    path_in_repo: str | None,
    settings: dict[str, Any],
    reading: Inputs,
) -> PushResult:
    """The checks passed: the repository found (or created), the card completed, then the upload (or, for
    a dry run, the plan against what the Hub holds, or what could be previewed without it)."""
    from huggingface_hub import HfApi  # heavy: huggingface_hub loads only when this runs

    token = o.token or _stored_token()
    if not token and not settings["offline"] and not o.dry_run:
        raise HubAccessError(
            "no Hugging Face token found: pushing needs one with write access (nothing was "
            "uploaded; the checks passed)",
            repo_id=where.repo_id,
            path=repo,
            hint="run `hf auth login`, set HF_TOKEN, or pass --token",
        )
    api = HfApi(endpoint=where.endpoint, token=token)
    created = False
    unchecked: tuple[str, ...] = ()
    try:
        _preflight(where, token, offline=settings["offline"])
    except RepositoryNotFoundError:
        if where.revision not in (None, "main"):
            raise
        if not o.dry_run:
            _create(api, where, o.private)  # as `hf upload` does; then the upload makes the first commit
        created = True
    except HubUnreachableError as e:
        if not o.dry_run:
            raise
        # a dry run previews what it can without the Hub, and says what that left unchecked
        why = "HF_HUB_OFFLINE is on" if settings["offline"] else e.message
        unchecked = _unchecked_offline(
            where.repo_id,
            why,
            card=plan is not None,
            license=plan is not None and "license" not in plan.metadata,
        )
    summary = checked.verify.summary
    if plan is not None and "license" not in plan.metadata and not unchecked:
        # the target's license is read only now: a card refused above sends no request at all
        from .model_card import plan_card

        plan = plan_card(
            root,
            summary.get("version"),
            summary.get("dialect"),
            accept_table=o.accept_table,
            repo_id=where.repo_id,
            license=_target_license(settings),
        )
    excluded = (
        ()
        if o.include_pickles
        else tuple(
            f.relative_to(root).as_posix()
            for f in sorted(root.rglob("*"))
            if f.is_file() and f.name.endswith(PICKLE_SUFFIXES)
        )
    )
    ignore = IGNORE_PATTERNS + ([] if o.include_pickles else PICKLE_PATTERNS) + list(o.exclude)
    include = [*o.include, "README.md"] if plan is not None and o.include else list(o.include)
    if o.dry_run:
        return _dry_run(
            api,
            where,
            checked,
            repo,
            root,
            include,
            ignore,
            o.delete,
            path_in_repo,
            plan,
            excluded,
            created,
            unchecked,
        )
    files, _ = _file_plan(
        api, where, root, include, ignore, o.delete, path_in_repo, plan, created, compare=False
    )
    if files.delete and not o.yes and not (o.confirm is not None and o.confirm(files.delete)):
        raise UsageError(
            f"the push would delete {len(files.delete)} file(s) from {where.repo_id}: "
            f"{', '.join(files.delete)}; nothing was uploaded or deleted",
            path=repo,
            hint="pass --yes to delete them, or --dry-run to see the whole plan",
        )
    if plan is not None and plan.changed:
        _write_card(root, plan.text, reading)
    counts = checked.verify.to_json()["counts"]
    message = o.commit_message or (
        f"Upload drafter checked by dflash2-ckpt ({counts['warning']} warning(s)"
        f"{', smoke passed' if o.smoke else ''})"
    )
    try:
        with quiet_hub_logs(), bounded_hub_calls(where):
            info = api.upload_folder(
                repo_id=where.repo_id,
                folder_path=root,
                path_in_repo=path_in_repo or None,
                revision=where.revision,
                create_pr=o.create_pr,
                commit_message=message,
                allow_patterns=list(include) or None,
                ignore_patterns=ignore,
                delete_patterns=exact(files.delete, path_in_repo) or None,
            )
    except Exception as e:  # noqa: BLE001 - one line and a hint at the CLI boundary, never a traceback
        raise _with_next_step(from_exception(e, where)) from None
    return PushResult(
        checked,
        repo,
        uploaded=True,
        commit_url=str(info.commit_url),
        commit_sha=getattr(info, "oid", None),
        pr_url=getattr(info, "pr_url", None),
        excluded=excluded,
        card=plan.findings if plan else (),
        card_metadata=plan.metadata if plan else None,
        created=created,
        plan=files,
    )


def _dry_run(
    api: Any,
    where: Where,
    checked: CheckResult,
    repo: str,
    root: Path,
    include: Sequence[str],
    ignore: list[str],
    delete: Sequence[str],
    path_in_repo: str | None,
    card: Any,
    excluded: tuple[str, ...],
    missing: bool,
    unchecked: tuple[str, ...] = (),
) -> PushResult:
    """The plan against what the Hub holds now (nothing for a repository that does not exist yet, nor
    without the Hub: then `unchecked` says what that left out)."""
    plan, remote = _file_plan(
        api, where, root, include, ignore, delete, path_in_repo, card, missing or bool(unchecked)
    )
    try:
        with quiet_hub_logs(), bounded_hub_calls(where):
            hub_card = next((f for f in remote if getattr(f, "path", None) == "README.md"), None)
            old = (
                None
                if missing or unchecked or card is None or hub_card is None
                else _hub_card(api, where, hub_card)
            )
    except Exception as e:  # noqa: BLE001 - one line and a hint at the CLI boundary, never a traceback
        raise from_exception(e, where) from None
    diff = card_diff(old, card.text) if card is not None else None
    return PushResult(
        checked,
        repo,
        dry_run=True,
        plan=plan,
        card_diff=diff,
        excluded=excluded,
        card=card.findings if card else (),
        card_metadata=card.metadata if card else None,
        created=missing,
        unchecked=unchecked,
    )


# the one hint for push without the Hub: a dry run works offline, the upload does not
OFFLINE_HINT = "`push --dry-run` previews without the Hub"


def _unchecked_offline(repo_id: str, why: str, *, card: bool, license: bool) -> tuple[str, ...]:
    """What a dry run without the Hub could not check, each naming what the preview assumed instead."""
    out = [
        f"anything on the Hub ({why})",
        f"whether {repo_id} exists and what it holds: every file is listed as an upload",
        "the token's write access",
    ]
    if card:
        out.append("the model card on the Hub: the diff is against no card")
    if license:
        out.append("the target's license: the card carries none")
    return tuple(out)


def _file_plan(
    api: Any,
    where: Where,
    root: Path,
    include: Sequence[str],
    ignore: list[str],
    delete: Sequence[str],
    path_in_repo: str | None,
    card: Any,
    missing: bool,
    compare: bool = True,
) -> tuple[FilePlan, list[Any]]:
    """What the push does to each file (upload_folder's own selection against the Hub's tree), and the
    Hub's tree."""
    try:
        with quiet_hub_logs(), bounded_hub_calls(where):
            remote = (
                []
                if missing
                else list(api.list_repo_tree(where.repo_id, revision=where.revision, recursive=True))
            )
    except Exception as e:  # noqa: BLE001 - one line and a hint at the CLI boundary, never a traceback
        raise from_exception(e, where) from None
    files = local_files(root, include, ignore, ["README.md"] if card is not None else [])
    overrides = {"README.md": card.text.encode("utf-8")} if card is not None else {}
    return file_plan(root, files, remote, path_in_repo, delete, overrides, compare=compare), remote


def _refuse_escaping_patterns(
    include: Sequence[str], exclude: Sequence[str], delete: Sequence[str], path_in_repo: str | None
) -> None:
    """Patterns and the folder stay inside the repository: `--include '../*'` or `--delete /x` is a
    mistake or an attack, never a request this tool can carry out as written."""
    bad = [
        f"{flag} {p!r}"
        for flag, pats in (
            ("--include", include),
            ("--exclude", exclude),
            ("--delete", delete),
            ("the subfolder", [path_in_repo or ""]),
        )
        for p in escaping(pats)
    ]
    if bad:
        raise UsageError(
            f"{', '.join(bad)} reach(es) outside the folder pushed (absolute, or `..`); nothing "
            "was read or sent",
            hint="give patterns relative to the folder, without `..`",
        )


def _target_license(settings: dict[str, Any]) -> Callable[[str], str | None]:
    """The license on the target's own card (its front matter), or its config's `license`; None when the
    target is not on the Hub or cannot be read: the card then carries no license rather than a guess."""

    def look(target: str) -> str | None:
        from huggingface_hub import HfApi  # heavy: huggingface_hub loads only when this runs

        api = HfApi(endpoint=settings["endpoint"], token=False)
        for name in ("README.md", "config.json"):
            try:
                with quiet_hub_logs(), bounded_hub_calls(Where(target, None, settings["endpoint"], target)):
                    text = _hub_file(api, target, name)
            except Exception:  # noqa: BLE001 - a gated, private or missing target only leaves the license out
                continue
            if name == "README.md":
                try:  # the target's card is untrusted too: read within bounds (usecases/card_yaml.py)
                    found = (front_matter(text) or {}).get("license")
                except CardYamlError:
                    found = None
            else:
                try:
                    found = json.loads(text).get("license")
                except (ValueError, AttributeError, RecursionError):
                    found = None
            if isinstance(found, str) and found:
                return found
        return None

    return look


def _hub_card(api: Any, where: Where, listed: Any) -> str:
    size = getattr(listed, "size", None) or 0
    if size > MAX_CARD_BYTES:  # not downloaded: the diff says so instead of comparing
        return (
            f"(the Hub's README.md is {size:,} bytes, past the {MAX_CARD_BYTES:,}-byte cap: not compared)\n"
        )
    return _hub_file(api, where.repo_id, "README.md", where.revision)


def _hub_file(api: Any, repo_id: str, name: str, revision: str | None = None) -> str:
    import tempfile  # lazy: tempfile only when a file is written (tests/cli/test_start.py)

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(api.hf_hub_download(repo_id, name, revision=revision, local_dir=tmp))
        if path.stat().st_size > MAX_CARD_BYTES:
            raise ValueError(f"{name} is larger than {MAX_CARD_BYTES:,} bytes")
        return path.read_text(encoding="utf-8", errors="replace")


def _stored_token() -> str | None:
    """The token huggingface_hub would use: HF_TOKEN, or the one `hf auth login` stored."""
    from huggingface_hub import get_token  # heavy: huggingface_hub loads only when this runs

    return get_token()


def _create(api: Any, where: Where, private: bool) -> None:
    try:
        with quiet_hub_logs(), bounded_hub_calls(where):
            api.create_repo(where.repo_id, private=private, exist_ok=True)
    except Exception as e:  # noqa: BLE001 - one typed error with the Hub's reason
        err = from_exception(e, where)
        err.hint = "check the token's write access to the organisation (nothing was uploaded)"
        raise err from None


def _write_card(root: str | os.PathLike[str], text: str, reading: Inputs) -> None:
    """README.md replaced atomically through the write guard: a failed write leaves the old card whole,
    and a README.md that is a link or a hard-linked file is refused, never written through."""
    write_text(Path(os.path.abspath(root)) / "README.md", text, reading=reading)


def _refuse_escaping_links(root: Path) -> None:
    """Every link anywhere under `root` must stay inside it. upload_folder follows links, so one to
    /etc/hostname or to a file beside the checkpoint would publish what it points at, although verify
    (which reads only config, index and weights) passed; nothing is uploaded while one exists."""
    top = root.resolve()
    bad: list[str] = []
    for here, dirs, files in os.walk(top):  # links to directories are listed, not followed
        for name in (*dirs, *files):
            p = Path(here) / name
            if not p.is_symlink():
                continue
            target = p.resolve()
            if target != top and top not in target.parents:
                bad.append(f"{p.relative_to(top).as_posix()} -> {os.readlink(p)}")
    if bad:
        raise UnsafePathError(
            f"{len(bad)} link(s) leave the checkpoint directory: {', '.join(sorted(bad)[:5])}"
            f"{', ...' if len(bad) > 5 else ''}; push would upload what they point at",
            path=str(root),
            hint="replace them with the files themselves, or remove them (nothing was uploaded)",
        )


def _with_next_step(err: SourceError) -> SourceError:
    """The hint for a destination that is not there: create it (a download hint would be wrong here)."""
    if isinstance(err, RepositoryNotFoundError):
        err.hint = (
            f"create it first (hf repos create {err.repo_id}), or check the name and the token's write access"
        )
    elif isinstance(err, HubUnreachableError):
        err.hint = f"check your connection or proxy (HF_ENDPOINT); {OFFLINE_HINT} (nothing was uploaded)"
    elif isinstance(err, RevisionNotFoundError):
        err.hint = (
            f"create the branch first (hf repos branch create {err.repo_id} {err.revision}), "
            "or push to an existing one"
        )
    return err


def _preflight(where: Where, token: str | None, *, offline: bool) -> None:
    """One cheap request before the upload, so that no network, a missing repo or branch, and a refused
    token are one typed error within seconds, not the upload's long retry loop (about 24 s offline)."""
    if offline:
        raise HubUnreachableError(
            "offline mode (HF_HUB_OFFLINE) is on and push needs the Hub",
            repo_id=where.repo_id,
            revision=where.revision,
            path=where.path,
            hint=f"unset HF_HUB_OFFLINE to upload; {OFFLINE_HINT} (nothing was uploaded; the checks passed)",
        )

    url = f"{where.endpoint}/api/models/{where.repo_id}"
    if where.revision:
        url += f"/revision/{quote(where.revision, safe='')}"
    try:
        HubTransport(where, token, RetryPolicy.from_env()).get_json(url)
    except SourceError as e:
        raise _with_next_step(e) from None
