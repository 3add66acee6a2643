"""A hostile or broken Hub (issue 22 items 2, 3): a trickling answer ends at the deadline, a gzip bomb
or an oversized answer is cut at the cap, deep JSON and bad file sizes are typed Hub errors (exit 3),
never an internal error and never a finding blamed on the checkpoint."""

from __future__ import annotations

import json
import resource
import subprocess
import sys
import time
from pathlib import Path

import pytest

from _kit.cli import invoke_cli, run_json
from _kit.fakehub import FakeHub, gzip_bomb
from dflash2_ckpt.cli import main

DEADLINE = 6.0
LIMIT_MIB = 640


def run(*args: str) -> tuple[int, dict, float]:
    """The kit's JSON run, timed: a hostile Hub must not hold a command past its deadline."""
    t0 = time.monotonic()
    code, doc = run_json(*args)
    return code, doc, time.monotonic() - t0


@pytest.fixture
def deadline(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DFLASH2_CKPT_HUB_DEADLINE", str(DEADLINE))


@pytest.mark.parametrize("where", ["/api/models/", "/cdn/"])  # model info; the safetensors range read
def test_a_trickling_answer_ends_at_the_deadline(
    hub: FakeHub, ckpts: dict[str, Path], deadline: None, where: str
) -> None:
    hub.add_commit("org/slow", ckpts["tiny"])
    hub.trickle_s = 1.0  # 1 byte a second: no read ever times out (timeout 5 s)
    hub.inject("trickle", where, times=99)
    code, report, took = run("verify", "org/slow")
    assert code == 3 and report["error"]["type"] == "HubUnreachableError", report
    assert "still arriving" in report["error"]["message"]
    assert took < DEADLINE + 4, took


def _limited(*args: str, limit_mib: int) -> tuple[int, dict, str]:
    """The CLI in a child process (it reads the fake Hub's address from the environment) under RLIMIT_AS."""

    def limits() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (limit_mib << 20, limit_mib << 20))

    proc = subprocess.run(
        [sys.executable, "-c", "from dflash2_ckpt.cli import main; main()", *args, "--format", "json"],
        capture_output=True,
        timeout=120,
        preexec_fn=limits,
    )
    out = proc.stdout.decode(errors="replace")
    return proc.returncode, json.loads(out) if out.strip() else {}, proc.stderr.decode(errors="replace")


def test_a_gzip_bomb_is_cut_at_the_cap(hub: FakeHub, ckpts: dict[str, Path]) -> None:
    gzip_bomb()  # made before the clock runs
    hub.add_commit("org/bomb", ckpts["tiny"])
    hub.inject("gzip-bomb", "/api/models/", times=9)
    # 256 MiB inflated, then decoded and parsed, needs far more than this; the 64 MiB cap fits
    code, report, err = _limited("verify", "org/bomb", limit_mib=LIMIT_MIB)
    assert "Traceback" not in err and "MemoryError" not in err, err[-2000:]
    assert code == 3 and report["error"]["type"] == "HubResponseError", report
    assert "once inflated" in report["error"]["message"]


@pytest.mark.parametrize(
    "fault,repo,says", [("oversized", "org/huge", "larger than"), ("deep-json", "org/deep", "nests deeper")]
)
def test_an_oversized_or_deep_answer_is_a_typed_error(
    hub: FakeHub, ckpts: dict[str, Path], fault: str, repo: str, says: str
) -> None:
    hub.add_commit(repo, ckpts["tiny"])
    hub.inject(fault, "/api/models/", times=9)
    code, report, _ = run("verify", repo)
    assert code == 3 and report["error"]["type"] == "HubResponseError", report
    assert says in report["error"]["message"]


@pytest.mark.parametrize("size", ["12abc", -5, 1.5, True, 10**30])
def test_a_bad_listed_size_is_the_hub_at_fault_not_the_checkpoint(
    hub: FakeHub, ckpts: dict[str, Path], size: object
) -> None:
    hub.add_commit("org/sizes", ckpts["tiny"])
    hub.sizes["model.safetensors"] = size
    code, report, _ = run("verify", "org/sizes")
    assert code == 3 and report["error"]["type"] == "HubResponseError", report
    assert "model.safetensors" in report["error"]["message"] and "not a size" in report["error"]["message"]
    assert "findings" not in report["error"] or not report["error"]["findings"]


# ---------------------------------------------------------------- subfolder discovery (item 12, item 5)


def _target_with_subfolders(tmp: Path, ckpts: dict[str, Path], subs: list[str]) -> Path:
    from _kit.hub_fixtures import layout

    return layout(tmp, ckpts, subs)


def test_a_network_error_ends_subfolder_discovery(
    hub: FakeHub, ckpts: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DFLASH2_CKPT_HUB_RETRIES", "1")
    hub.add_commit("org/many", _target_with_subfolders(tmp_path, ckpts, ["a", "b", "c", "d"]))
    hub.inject("503", "/config.json", times=10_000)  # every config.json, root's excepted below
    hub.faults[-1].contains = "/a/config.json"
    for sub in "bcd":
        hub.inject("503", f"/{sub}/config.json", times=10_000)
    code, report, _ = run("verify", "org/many")
    assert code == 3 and report["error"]["type"] == "HubStatusError", report
    asked = {sub for sub in "abcd" if hub.requests("GET", f"/{sub}/config.json")}
    assert len(asked) == 1, asked  # stopped at the first folder, not tried the rest


def test_an_injected_subfolder_name_writes_no_workflow_command(
    hub: FakeHub, ckpts: dict[str, Path], tmp_path: Path
) -> None:
    name = "dflash\n::error file=evil.py::injected"
    hub.add_commit("org/inject", _target_with_subfolders(tmp_path, ckpts, [name]))
    r = invoke_cli(main, ["verify", "org/inject", "--format", "github"])
    lines = r.output.split("\n")
    assert any("DF612" in x for x in lines), r.output
    assert not [x for x in lines if x.lstrip().startswith("::error file=evil")], lines
    assert all("\n" not in x for x in lines)


# ---------------------------------------------------------------- push and links (item 4)


@pytest.mark.parametrize("link", ["etc", "beside", "dir", "nested"])
def test_push_refuses_every_link_that_leaves_the_checkpoint(
    hub: FakeHub, ckpts: dict[str, Path], tmp_path: Path, link: str
) -> None:
    import os
    import shutil

    hub.add_commit("org/dest", {"README.md": b"# drafter\n"}, granted={"hf_granted"})
    d = tmp_path / "ckpt"
    shutil.copytree(ckpts["tiny"], d)
    secret = tmp_path / "secret.txt"
    secret.write_text("not for the Hub")
    if link == "etc":
        os.symlink("/etc/hostname", d / "notes.txt")
    elif link == "beside":
        os.symlink(secret, d / "README.md")
    elif link == "dir":
        os.symlink(tmp_path, d / "extras")
    else:
        (d / "docs").mkdir()
        os.symlink("../../secret.txt", d / "docs" / "card.md")
    os.symlink("config.json", d / "config-copy.json")  # a link that stays inside is fine
    before = len(hub.log)
    code, report, _ = run("push", str(d), "org/dest", "--token", "hf_granted")
    assert code == 3 and report["error"]["type"] == "UnsafePathError", report
    assert (
        "leave the checkpoint" in report["error"]["message"]
        and "config-copy" not in report["error"]["message"]
    )
    assert hub.log[before:] == [] and hub.commit_requests == []


def test_push_with_links_inside_the_checkpoint_uploads(
    hub: FakeHub, ckpts: dict[str, Path], tmp_path: Path
) -> None:
    import os
    import shutil

    hub.add_commit("org/dest", {"README.md": b"# drafter\n"}, granted={"hf_granted"})
    d = tmp_path / "ckpt"
    shutil.copytree(ckpts["tiny"], d)
    os.symlink("config.json", d / "config-copy.json")
    code, report, _ = run("push", str(d), "org/dest", "--token", "hf_granted")
    assert code == 0 and report["uploaded"], report
