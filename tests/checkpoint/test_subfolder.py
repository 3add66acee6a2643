"""A drafter in a subfolder of a target repo (or directory): found when it is the only one, with DF612;
several make the run stop with the candidates listed. Local directories and Hub repos alike."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from _kit.cli import invoke_cli
from _kit.fakehub import FakeHub
from _kit.hub_fixtures import layout
from dflash2_ckpt.checkpoint.open_source import open_source
from dflash2_ckpt.cli import main
from dflash2_ckpt.errors import AmbiguousSubfolderError
from dflash2_ckpt.usecases.verify import verify


def sources(kind: str, d: Path, hub: FakeHub) -> str:
    if kind == "local":
        return str(d)
    hub.add_commit("org/repo", d)
    return "org/repo"


@pytest.mark.parametrize("kind", ["local", "hub"])
def test_the_one_drafter_subfolder_is_used_and_named(
    tmp_path: Path, ckpts: dict[str, Path], hub: FakeHub, kind: str
) -> None:
    d = layout(tmp_path, ckpts, ["dflash"])
    target = sources(kind, d, hub)
    report = verify(open_source(target))
    notes = [f for f in report.findings if f.code == "DF612"]
    assert len(notes) == 1 and notes[0].severity == "info"
    assert notes[0].details["subfolder"] == "dflash" and "--subfolder dflash" in notes[0].message
    assert "not a drafter" in notes[0].message
    rest = [f.to_json() for f in report.findings if f.code != "DF612"]
    assert rest == [f.to_json() for f in verify(ckpts["tiny"]).findings]
    assert report.summary == verify(ckpts["tiny"]).summary
    r = invoke_cli(main, ["verify", target, "--format", "json"])
    assert r.exit_code == 0 and [f["code"] for f in json.loads(r.output)["findings"]].count("DF612") == 1


@pytest.mark.parametrize("kind", ["local", "hub"])
def test_several_drafter_subfolders_ask_which(
    tmp_path: Path, ckpts: dict[str, Path], hub: FakeHub, kind: str
) -> None:
    d = layout(tmp_path, ckpts, ["dflash-a", "variants/dflash-b"])
    target = sources(kind, d, hub)
    with pytest.raises(AmbiguousSubfolderError) as e:
        open_source(target)
    assert e.value.candidates == ["dflash-a", "variants/dflash-b"]
    r = invoke_cli(main, ["verify", target])
    assert r.exit_code == 3 and "dflash-a, variants/dflash-b" in r.output and "--subfolder" in r.output
    ok = invoke_cli(main, ["verify", target, "--subfolder", "variants/dflash-b"])
    assert ok.exit_code == 0 and "DF612" not in ok.output


@pytest.mark.parametrize("kind", ["local", "hub"])
def test_a_drafter_at_the_root_is_used_as_it_is(
    tmp_path: Path, ckpts: dict[str, Path], hub: FakeHub, kind: str
) -> None:
    d = layout(tmp_path, ckpts, ["dflash"], root_drafter=True)
    report = verify(open_source(sources(kind, d, hub)))
    assert "DF612" not in [f.code for f in report.findings]
    assert [f.to_json() for f in report.findings] == [f.to_json() for f in verify(ckpts["tiny"]).findings]


def test_no_drafter_anywhere_reports_the_root(tmp_path: Path, ckpts: dict[str, Path]) -> None:
    d = layout(tmp_path, ckpts, [])
    codes = [f.code for f in verify(open_source(str(d))).findings]
    assert "DF612" not in codes and "DF304" in codes
