"""Audit many drafters: header-level verify + compat for each, concurrently, cached by commit sha.

One failure never stops the rest: a drafter that cannot be read becomes a row that says why.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from ..errors import Dflash2Error
from ..findings import Finding, Verdict
from ..usecases.model_card import target_of
from .cache import AuditCache, cache_key
from .inputs import Item, classify
from .ratelimit import RateLimiter, hub_rate_limit
from .rows import SEVERITIES, Row, columns

Progress = Callable[[int, int, Row], None]
EMITS: frozenset[str] = frozenset({"DF613"})


@dataclass(frozen=True)
class Part:
    subject: str
    findings: tuple[Any, ...]


@dataclass(frozen=True)
class AuditResult(Verdict):
    rows: tuple[Row, ...]
    engines: tuple[str, ...] = ()  # the engines asked for (empty: every profile)
    seconds: float = 0.0
    requests: int | None = None  # HTTP requests made to the Hub (when rate-limited)
    cache_hits: int = 0
    stats: dict[str, Any] = field(default_factory=dict)
    kind: ClassVar[str] = "audit"

    @property
    def subject(self) -> str:
        return f"{len(self.rows)} drafter(s)"

    @property
    def parts(self) -> tuple[Part, ...]:
        """One part per drafter, so sarif and github place each finding on its own drafter (its directory,
        or its repo id and subfolder); a drafter that could not be read is one DF613 error."""
        return tuple(
            Part(_where(r), r.finding_objects() if r.readable else (_unreadable(r),)) for r in self.rows
        )

    @property
    def unreadable(self) -> tuple[str, ...]:
        """The drafters the run could not check (sarif: the run did not complete for them)."""
        return tuple(f"{r.input}: {(r.error or {}).get('message')}" for r in self.rows if not r.readable)

    @property
    def findings(self) -> tuple[Any, ...]:
        return tuple(f for p in self.parts for f in p.findings)

    def failed(self, strict: bool = False) -> bool:
        """Some drafter does not load cleanly (an unreadable one included)."""
        return not all(self.clean(r) for r in self.rows)

    @property
    def columns(self) -> list[str]:
        return columns(self.rows)

    def clean(self, row: Row) -> bool:
        return row.loads_cleanly(engines_named=bool(self.engines))

    def nothing_audited(self) -> bool:
        return not any(r.readable for r in self.rows)

    def summary(self) -> dict[str, Any]:
        cols = self.columns
        return {
            "drafters": len(self.rows),
            "readable": sum(r.readable for r in self.rows),
            "clean": sum(self.clean(r) for r in self.rows),
            "loads": {c: sum(r.verdicts().get(c) == "loads" for r in self.rows) for c in cols},
        }

    def to_json(self) -> dict[str, Any]:
        return {
            "engines": list(self.engines),
            "columns": self.columns,
            "summary": self.summary(),
            "passed": self.passed,
            "seconds": round(self.seconds, 3),
            "requests": self.requests,
            "cache_hits": self.cache_hits,
            "rows": [r.to_json() for r in self.rows],
        }


def _where(r: Row) -> str:
    return f"{r.repo}/{r.subfolder}" if r.subfolder and not r.repo.endswith(r.subfolder) else r.repo


def _unreadable(r: Row) -> Any:
    err = r.error or {}
    hint = f" ({err['hint']})" if err.get("hint") else ""
    return Finding(
        "DF613",
        f"{r.input}: could not be read: {err.get('message')}{hint}",
        details={"type": err.get("type")},
    )


def _fingerprint() -> str:
    """What a cached row depends on besides the repo content: this toolkit's version and its engine profiles
    (their source text: a stable stand-in for the profile data, which holds functions whose repr is not)."""

    from .. import engines  # lazy: engines loads only on this path
    from ..version import package_version  # lazy: version loads only on this path

    h = hashlib.sha256(package_version().encode())
    for path in sorted(Path(engines.__file__).parent.glob("*.py")):
        h.update(path.name.encode() + b"\0" + path.read_bytes())
    return h.hexdigest()[:16]


def check_source(source: Any, item: Item, engines: Sequence[str]) -> Row:
    """Header-level verify and compat of one opened source: never tensor data."""
    from ..checkpoint import open_checkpoint  # lazy: checkpoint loads only on this path
    from ..convert.advice import compat  # lazy: convert.advice loads only on this path
    from ..usecases.verify import verify  # lazy: usecases.verify loads only on this path

    ckpt = open_checkpoint(source)
    report = verify(ckpt, engines=engines)
    verdicts = compat(ckpt, engines=engines, findings=report.findings)
    found = [f.to_json() for f in report.findings]
    summary = report.summary
    return Row(
        input=item.text,
        repo=source.repo_id or source.label,
        revision=source.sha or None,
        subfolder=source.subfolder,
        dialect=summary.get("dialect"),
        version=summary.get("version"),
        target=target_of(ckpt.config),
        counts={s: sum(f["severity"] == s for f in found) for s in SEVERITIES},
        findings=tuple(found),
        engines=tuple(verdicts.to_json()["engines"]),
    )


def _error_row(item: Item, e: BaseException) -> Row:
    hint = getattr(e, "hint", "") or None
    message = str(e) if isinstance(e, Dflash2Error) else f"{type(e).__name__}: {e}"
    return Row(
        input=item.text, repo=item.text, error={"type": type(e).__name__, "message": message, "hint": hint}
    )


def audit_one(
    item: Item, engines: Sequence[str], cache: AuditCache, fingerprint: str, token: str | None = None
) -> Row:
    from ..checkpoint.open_source import open_source  # lazy: checkpoint.open_source loads only on this path
    from ..sources.hub import HubSource  # lazy: sources.hub loads only on this path

    try:
        if item.kind == "local":
            return check_source(open_source(item.text), item, engines)
        probe = open_source(item.text, token=token, require_weights=False)  # resolves the sha: one request
        if not isinstance(probe, HubSource):  # a local path after all (created since classify)
            return check_source(open_source(item.text), item, engines)
        hit = cache.get(cache_key(probe.repo_id, probe.sha, probe.subfolder, engines, fingerprint))
        if hit is not None:
            return Row.from_json(hit, input=item.text, cached=True)
        # the drafter itself: its files, and the one drafter subfolder when the root is not a drafter
        source = open_source(item.text, token=token)
        row = check_source(source, item, engines)
        sha = source.sha if isinstance(source, HubSource) else probe.sha
        cache.put(cache_key(probe.repo_id, sha, probe.subfolder, engines, fingerprint), row.to_json())
        return row
    except Exception as e:  # noqa: BLE001  one unreadable drafter is a row, never the end of the audit
        return _error_row(item, e)


def audit(
    inputs: Sequence[Item | str],
    *,
    engines: Sequence[str] = (),
    jobs: int = 4,
    cache_dir: str | None = None,
    rate: float | None = 10.0,
    token: str | None = None,
    progress: Progress | None = None,
) -> AuditResult:
    """Audit every input; rows keep the input order. `rate` bounds Hub requests per second (None: unbounded)."""
    items = [i if isinstance(i, Item) else classify(i) for i in inputs]
    cache = AuditCache(cache_dir)
    limiter = RateLimiter(rate, burst=max(1, jobs)) if rate else None
    fingerprint = _fingerprint()
    start = time.monotonic()
    rows: list[Row | None] = [None] * len(items)
    with hub_rate_limit(limiter), ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        futures = {
            pool.submit(audit_one, it, tuple(engines), cache, fingerprint, token): n
            for n, it in enumerate(items)
        }
        for done, fut in enumerate(as_completed(futures), 1):
            n = futures[fut]
            rows[n] = fut.result()
            if progress is not None:
                progress(done, len(items), rows[n])  # type: ignore[arg-type]
    return AuditResult(
        tuple(r for r in rows if r is not None),
        tuple(engines),
        time.monotonic() - start,
        limiter.requests if limiter else None,
        cache.hits,
    )
