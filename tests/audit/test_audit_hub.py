"""audit over a fake Hub catalogue: the table, the commit-sha cache, concurrency and isolation of failures."""

from __future__ import annotations

import json
import threading
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from _kit.cli import invoke_cli
from _kit.fakehub import FakeHub
from dflash2_ckpt.audit import audit
from dflash2_ckpt.cli import main

from .catalogue import build


@pytest.fixture
def catalogue(hub: FakeHub, tmp_path: Path) -> Iterator[tuple[FakeHub, dict[str, str]]]:
    kinds = build(hub, tmp_path / "scratch")
    yield hub, kinds


def _per_repo(hub: FakeHub, since: int = 0) -> Counter[str]:
    """Requests per repo id, from the server's log (model info, resolve and CDN paths)."""
    out: Counter[str] = Counter()
    for e in hub.log[since:]:
        parts = e.path.split("?")[0].strip("/").split("/")
        if parts[:2] == ["api", "models"] and len(parts) >= 4:
            out[f"{parts[2]}/{parts[3]}"] += 1
        elif parts[0] == "cdn" and len(parts) >= 3:
            out[f"{parts[1]}/{parts[2]}"] += 1
        elif len(parts) >= 3 and parts[2] == "resolve":
            out[f"{parts[0]}/{parts[1]}"] += 1
    return out


def test_one_row_per_drafter_and_failures_stay_in_their_row(
    catalogue: tuple[FakeHub, dict[str, str]],
) -> None:
    hub, kinds = catalogue
    assert len(kinds) >= 50
    hub.inject("429", contains="/org/throttled/", times=2, retry_after="0")
    repos = list(kinds)
    result = audit(repos, jobs=8, rate=None)
    rows = {r.input: r for r in result.rows}
    assert [r.input for r in result.rows] == repos  # input order, whatever finished first
    for repo, kind in kinds.items():
        row = rows[repo]
        if kind in ("good", "real", "throttled", "subfolder"):
            assert row.readable and row.counts["error"] == 0, (repo, row.error, row.findings)
            assert row.revision == hub.repos[repo].refs["main"]
            assert result.clean(row), (repo, row.verdicts())
        elif kind == "broken":
            assert row.readable and row.counts["error"] > 0 and not result.clean(row), repo
        elif kind == "empty":  # no weights at all: the row says so and what to check
            assert not row.readable and "safetensors" in str(row.error["hint"]), row  # type: ignore[index]
        else:
            assert not row.readable, (repo, row)
    assert rows["org/gated"].error["type"] == "GatedRepoError"  # type: ignore[index]
    assert rows["org/vanishes"].error["type"] in ("RepositoryNotFoundError", "EntryNotFoundError")  # type: ignore[index]
    assert rows["org/target-with-drafter"].subfolder == "dflash"
    assert rows["z-lab/Qwen3.8-27B-DFlash2"].version == "v2"
    # every column is an engine version range, and the official layout loads on the newest vLLM
    assert any(c.startswith("vllm") for c in result.columns)
    assert "loads" in rows["z-lab/Qwen3.8-27B-DFlash2"].verdicts().values()
    summary = result.summary()
    assert summary["drafters"] == len(kinds) and summary["readable"] == len(kinds) - 4


def test_header_level_only(catalogue: tuple[FakeHub, dict[str, str]]) -> None:
    hub, kinds = catalogue
    audit(["z-lab/Qwen3.8-27B-DFlash2"], rate=None)
    # the 27B repo holds a 3.8 GB safetensors file: only its header travels
    assert hub.file_bytes() < 64 * 1024


def test_second_run_costs_one_request_per_unchanged_repo(
    catalogue: tuple[FakeHub, dict[str, str]], tmp_path: Path
) -> None:
    hub, kinds = catalogue
    repos = [r for r, k in kinds.items() if k in ("good", "real", "broken")]
    first = audit(repos, jobs=4, cache_dir=str(tmp_path / "cache"), rate=None)
    assert first.cache_hits == 0
    changed = "zlab/nested-v2-03"
    hub.add_commit(changed, {"README.md": b"new card\n"})  # a new commit: a new sha
    mark = len(hub.log)
    second = audit(repos, jobs=4, cache_dir=str(tmp_path / "cache"), rate=None)
    per_repo = _per_repo(hub, mark)
    assert second.cache_hits == len(repos) - 1
    for repo in repos:
        if repo == changed:
            assert per_repo[repo] > 1
        else:
            assert per_repo[repo] == 1, (repo, per_repo[repo])
    assert [r.to_json() for r in second.rows if r.repo != changed] == [
        r.to_json() for r in first.rows if r.repo != changed
    ]
    assert next(r for r in second.rows if r.repo == changed).revision == hub.repos[changed].refs["main"]


def test_jobs_bound_the_concurrent_requests(
    catalogue: tuple[FakeHub, dict[str, str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    hub, kinds = catalogue
    live, peak, lock = [0], [0], threading.Lock()
    real_route = None

    def handler_route(self: Any) -> None:
        with lock:
            live[0] += 1
            peak[0] = max(peak[0], live[0])
        try:
            real_route(self)  # type: ignore[misc]
        finally:
            with lock:
                live[0] -= 1

    handler = hub._server.RequestHandlerClass
    real_route = handler._route  # type: ignore[attr-defined]
    monkeypatch.setattr(handler, "_route", handler_route)
    repos = [r for r, k in kinds.items() if k == "good"]
    result = audit(repos, jobs=3, rate=None)
    assert all(r.readable for r in result.rows)
    assert 1 <= peak[0] <= 3


def test_rate_limit_counts_every_request(catalogue: tuple[FakeHub, dict[str, str]]) -> None:
    hub, kinds = catalogue
    mark = len(hub.log)
    result = audit(["zlab/nested-v2-00", "spec/flat-v2-00"], jobs=2, rate=1000.0)
    assert result.requests == len(hub.log) - mark


def test_hub_search_by_architecture_and_tag(
    catalogue: tuple[FakeHub, dict[str, str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    hub, kinds = catalogue
    import _kit.fakehub as fh

    monkeypatch.setattr(fh, "LISTING_PAGE", 7)  # several pages
    from dflash2_ckpt.audit import hub_search

    v2 = hub_search("arch:DFlash2DraftModel")
    assert "zlab/nested-v2-00" in v2 and "spec/flat-v2-09" in v2 and "zlab/nested-v1-00" not in v2
    assert sorted(hub_search("tag:speculators")) == sorted(r for r in kinds if r.startswith("spec/"))
    assert hub_search("nested-v1 author:zlab") == sorted(r for r in kinds if r.startswith("zlab/nested-v1"))


def test_cli_table_formats_and_exit_codes(catalogue: tuple[FakeHub, dict[str, str]], tmp_path: Path) -> None:
    hub, kinds = catalogue
    good = ["zlab/nested-v2-00", "spec/flat-v2-00"]
    r = invoke_cli(main, ["audit", *good, "--format", "json", "--engine", "vllm"])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.output)
    assert [row["repo"] for row in doc["rows"]] == good and doc["passed"] is True
    assert all(len(row["engines"]) == 1 and row["engines"][0]["engine"] == "vllm" for row in doc["rows"])

    lst = tmp_path / "list.txt"
    lst.write_text("# drafters\nzlab/nested-v2-01\n\nbroken/tensor-missing  # broken\n")
    out = tmp_path / "audit.md"
    r = invoke_cli(main, ["audit", "--from-file", str(lst), "--format", "markdown", "-o", str(out)])
    assert r.exit_code == 1, r.output  # one drafter does not load cleanly
    md = out.read_text()
    assert (
        sum(ln.startswith("| ") for ln in md.splitlines()) == 3
        and "| zlab/nested-v2-01 |" in md
        and "| broken/tensor-missing |" in md
    )

    r = invoke_cli(main, ["audit", "org/nope-1", "org/nope-2", "--format", "json"])
    assert r.exit_code == 3  # nothing could be audited
    err = json.loads(r.output)["error"]
    assert "none of the 2 drafter(s)" in err["message"] and "org/nope-1: " in err["message"]

    r = invoke_cli(main, ["audit", "--format", "html", "zlab/nested-v2-02"])
    assert r.exit_code == 0 and r.output.startswith("<!doctype html>")


def test_local_directories_are_audited_too(fixtures_dir: Path) -> None:
    result = audit(
        [str(fixtures_dir / "good" / "nested-v2"), str(fixtures_dir / "broken" / "tensor-missing")], rate=None
    )
    assert result.rows[0].readable and result.rows[0].counts["error"] == 0
    assert result.rows[1].counts["error"] > 0


def test_cache_fingerprint_is_the_same_in_another_process() -> None:
    import subprocess
    import sys

    from conftest import ROOT

    code = "from dflash2_ckpt.audit.run import _fingerprint; print(_fingerprint())"
    runs = {
        subprocess.run(
            [sys.executable, "-c", code],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=True,
            env={**__import__("os").environ, "PYTHONPATH": str(ROOT)},
        ).stdout
        for _ in range(2)
    }
    assert len(runs) == 1 and len(runs.pop().strip()) == 16
