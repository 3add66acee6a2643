"""Every case of the adversarial corpus: the documented finding, the documented exit code, no traceback,
no hang, bounded memory, and never more than the headers read."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from adv_corpus import ALL, PICKLE_NAMES, Case
from adv_harness import run_inprocess, run_limited

# Header-level verification reads config, index and headers only; the largest hostile header in the
# corpus is 400 KB. Anything near the 100 MB sparse files means a cap was bypassed.
MAX_BYTES_READ = 1_000_000


def check(case: Case, code: int, report: dict) -> None:
    assert code == case.exit, (case.id, code, report.get("findings"))
    findings = report["findings"]
    if case.code:
        hits = [f for f in findings if f["code"].startswith(case.code)]
        assert hits, (case.id, [(f["code"], f["message"]) for f in findings])
        assert any(re.search(case.match, f["message"]) for f in hits), (case.id, [f["message"] for f in hits])
    else:
        assert not [f for f in findings if f["severity"] == "error"], findings
    assert report["bytes_read"] < MAX_BYTES_READ, report["bytes_read"]


@pytest.mark.parametrize("case", [c for c in ALL if not c.bomb], ids=lambda c: c.id)
def test_case_inprocess(case: Case, tmp_path: Path) -> None:
    d = case.build(tmp_path)
    code, report = run_inprocess(["verify", str(d), *case.args])
    check(case, code, report)


@pytest.mark.parametrize("case", [c for c in ALL if c.bomb], ids=lambda c: c.id)
def test_bomb_under_memory_and_time_limit(case: Case, tmp_path: Path) -> None:
    d = case.build(tmp_path)
    code, report, err = run_limited(["verify", str(d), *case.args])
    check(case, code, report)


@pytest.mark.parametrize("case", [c for c in ALL if c.id.startswith("pickle")], ids=lambda c: c.id)
def test_pickles_are_never_unpickled(case: Case, tmp_path: Path) -> None:
    d = case.build(tmp_path)
    code, report = run_inprocess(["verify", str(d), "--scan", *case.args])
    check(case, code, report)
    reported = {f["file"] for f in report["findings"] if f["code"] == "DF602"}
    assert reported == set(PICKLE_NAMES)
    assert not list(tmp_path.glob("UNPICKLED-*")), "a pickle was loaded"


def test_the_marker_pickle_really_is_a_bomb(tmp_path: Path) -> None:
    # guards the guard: if loading this pickle did not create the marker, the test above proves nothing
    import pickle

    from adv_corpus import pickle_bomb

    marker = tmp_path / "marker"
    pickle.loads(pickle_bomb(marker)).close()
    assert marker.exists()


def test_every_case_id_is_unique() -> None:
    ids = [c.id for c in ALL]
    assert len(ids) == len(set(ids))
