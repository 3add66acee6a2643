"""verify runs the ordered list of check families; each family decides whether it applies."""

from __future__ import annotations

from pathlib import Path

import pytest

from _kit.emitters import emitter_of
from conftest import FIXTURES
from dflash2_ckpt.checks import suite
from dflash2_ckpt.checks.context import CheckContext
from dflash2_ckpt.findings import Finding
from dflash2_ckpt.usecases.verify import inspect, verify

BROKEN = FIXTURES / "broken"


# findings written while the checkpoint opens reach verify through the family that replays them
OPENED_BY = {
    "dflash2_ckpt.formats.config_findings": "config",
    "dflash2_ckpt.checkpoint.files": "files",
    "dflash2_ckpt.checkpoint.discover": "files",
}


def _family(code: str) -> str:
    module = emitter_of(code)
    return OPENED_BY.get(module, module.rsplit(".", 1)[-1])


@pytest.mark.parametrize("fixture", sorted(p.name for p in BROKEN.iterdir() if p.is_dir()))
def test_findings_come_out_in_family_order(fixture: str) -> None:
    order = [name for name, _ in suite.FAMILIES]
    found = verify(BROKEN / fixture, scan=True).findings
    positions = [order.index(_family(f.code)) for f in found]
    assert positions == sorted(positions)


def test_a_family_added_to_the_list_runs_in_its_place(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[str] = []

    def extra(ctx: CheckContext) -> list[Finding]:
        seen.append(ctx.checkpoint.label)
        return [Finding("DF116", "from the added family", field="x")]

    monkeypatch.setattr(suite, "FAMILIES", (*suite.FAMILIES[:2], ("extra", extra), *suite.FAMILIES[2:]))
    found = verify(FIXTURES / "good" / "nested-v2").findings
    assert len(seen) == 1 and [f.message for f in found] == ["from the added family"]


def test_families_decide_their_own_preconditions() -> None:
    # a DSpark drafter: identity says so; the tensor, causality and pairing families stay silent
    found = verify(BROKEN / "dspark-not-dflash", target=FIXTURES / "targets" / "tiny-target").findings
    assert {_family(f.code) for f in found} <= {"config", "files", "identity"}
    assert "DF304" in {f.code for f in found}


def test_the_content_family_runs_only_when_asked(tmp_path: Path) -> None:
    good = FIXTURES / "good" / "nested-v2"
    assert "scan" not in verify(good).to_json()
    assert verify(good, scan=True).to_json()["scan"]["tensors_scanned"] > 0


def test_inspect_reports_what_opening_finds_only() -> None:
    fixture = BROKEN / "fc-wrong-shape"
    assert "DF203" in {f.code for f in verify(fixture).findings}
    assert {_family(f.code) for f in inspect(fixture).findings} <= {"config", "files"}
