"""push: nothing leaves the machine unless verify passes; a passing checkpoint lands as one commit."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from _kit.cli import run_output as run
from dflash2_ckpt.checkpoint.open_source import open_source
from dflash2_ckpt.usecases.push import smoke_failed
from dflash2_ckpt.usecases.verify import verify

from _kit.fakehub import FakeHub



@pytest.fixture
def dest(hub: FakeHub) -> str:
    hub.add_commit("org/dest", {"README.md": b"# drafter\n"}, granted={"hf_granted"})
    return "org/dest"


def test_broken_checkpoint_is_not_uploaded(hub: FakeHub, ckpts: dict[str, Path], dest: str) -> None:
    before = len(hub.log)
    code, out = run("push", str(ckpts["tiny-broken"]), dest, "--token", "hf_granted")
    assert code == 1
    assert "DF201" in out and "nothing was uploaded" in out
    assert hub.log[before:] == [] and hub.commit_requests == []      # not even a preupload request


def test_good_checkpoint_is_uploaded_and_verifies_on_the_hub(hub: FakeHub, ckpts: dict[str, Path],
                                                             dest: str) -> None:
    code, out = run("push", str(ckpts["tiny"]), dest, "--token", "hf_granted", "--format", "json")
    doc = json.loads(out)
    assert code == 0 and doc["uploaded"] and doc["verify"]["passed"]
    assert len(hub.commit_requests) == 1 and hub.requests("POST", "/preupload/")
    assert doc["commit_sha"] == hub.repos["org/dest"].refs["main"]
    files = hub.repos["org/dest"].commits[doc["commit_sha"]]
    for p in ckpts["tiny"].iterdir():
        assert files[p.name] == p.read_bytes()
    assert "README.md" in files                                      # the rest of the repo is kept
    same = verify(open_source("org/dest", token="hf_granted"))
    assert same.to_json()["findings"] == verify(ckpts["tiny"]).to_json()["findings"]


def test_push_to_subfolder_branch_and_pr(hub: FakeHub, ckpts: dict[str, Path], dest: str) -> None:
    hub.add_commit("org/dest", {}, ref="dev")
    code, out = run("push", str(ckpts["tiny"]), f"{dest}/dflash", "--revision", "dev", "--token", "hf_granted",
                    "--format", "json")
    assert code == 0
    assert "dflash/model.safetensors" in hub.repos["org/dest"].commits[hub.repos["org/dest"].refs["dev"]]
    code, out = run("push", str(ckpts["tiny"]), dest, "--create-pr", "--token", "hf_granted", "--format", "json")
    doc = json.loads(out)
    assert code == 0 and doc["pr_url"] and "refs/pr/1" in hub.repos["org/dest"].refs
    req = hub.commit_requests[-1]
    assert req["revision"] == "refs/pr/1" or req["query"].get("create_pr") == ["1"]   # with / without hf_xet
    pr = hub.repos["org/dest"].commits[hub.repos["org/dest"].refs["refs/pr/1"]]
    assert pr["model.safetensors"] == (ckpts["tiny"] / "model.safetensors").read_bytes()
    main_files = hub.repos["org/dest"].commits[hub.repos["org/dest"].refs["main"]]
    assert "model.safetensors" not in main_files                     # main untouched by the PR


def test_push_errors_are_one_line(hub: FakeHub, ckpts: dict[str, Path], dest: str) -> None:
    code, out = run("push", str(ckpts["tiny"]), "org/missing", "--token", "hf_granted")
    assert code == 3 and "not found" in out and "hf repos create" in out and "Traceback" not in out
    code, out = run("push", str(ckpts["tiny"]), dest)               # no token: the Hub refuses the commit
    assert code == 3 and "Traceback" not in out


def test_smoke_without_the_extra_is_exit_3(hub: FakeHub, ckpts: dict[str, Path], dest: str,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    import sys
    monkeypatch.setitem(sys.modules, "dflash2_ckpt.smoke", None)     # as if the [smoke] extra were missing
    code, out = run("push", str(ckpts["tiny"]), dest, "--smoke", "--token", "hf_granted")
    assert code == 3 and "smoke" in out and hub.commit_requests == []


def test_smoke_refusal_uploads_nothing(hub: FakeHub, ckpts: dict[str, Path], dest: str,
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    import types
    fake = types.ModuleType("dflash2_ckpt.smoke")
    fake.run_smoke = lambda d: types.SimpleNamespace(failed=lambda strict=False: True)  # type: ignore[attr-defined]
    monkeypatch.setitem(__import__("sys").modules, "dflash2_ckpt.smoke", fake)
    code, out = run("push", str(ckpts["tiny"]), dest, "--smoke", "--token", "hf_granted")
    assert code == 1 and "refused by smoke" in out and hub.commit_requests == []


@pytest.mark.parametrize("result, failed", [(True, False), (False, True), (None, False)])
def test_smoke_failed_shapes(result: object, failed: bool) -> None:
    assert smoke_failed(result) is failed


def test_push_offline_is_one_line_and_immediate(hub: FakeHub, ckpts: dict[str, Path], dest: str,
                                                offline: None) -> None:
    import time
    t0 = time.monotonic()
    code, out = run("push", str(ckpts["tiny"]), dest, "--token", "hf_granted")
    assert code == 3 and time.monotonic() - t0 < 3 and not hub.log
    assert "HF_HUB_OFFLINE" in out and "unset HF_HUB_OFFLINE" in out and "download" not in out
    assert len(out.strip().splitlines()) == 2, out                   # one line, one hint


def test_push_with_no_network_fails_fast_without_library_logs(hub: FakeHub, ckpts: dict[str, Path], dest: str,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    import socket
    import time

    from huggingface_hub import constants
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    dead = f"http://127.0.0.1:{s.getsockname()[1]}"
    s.close()
    monkeypatch.setenv("HF_ENDPOINT", dead)
    monkeypatch.setattr(constants, "ENDPOINT", dead)
    monkeypatch.delenv("DFLASH2_CKPT_HUB_BACKOFF")                  # the default policy a user gets
    t0 = time.monotonic()
    code, out = run("push", str(ckpts["tiny"]), dest, "--token", "hf_granted")
    took = time.monotonic() - t0
    assert code == 3 and took < 5, (took, out)
    assert "cannot reach" in out and "Retrying" not in out and "Traceback" not in out
    assert len(out.strip().splitlines()) == 2, out


def test_push_to_a_missing_branch_says_how_to_create_it(hub: FakeHub, ckpts: dict[str, Path], dest: str) -> None:
    from dflash2_ckpt.errors import RevisionNotFoundError
    from dflash2_ckpt.usecases.push import push
    with pytest.raises(RevisionNotFoundError) as e:
        push(ckpts["tiny"], dest, revision="nope", token="hf_granted")
    assert e.value.repo_id == "org/dest" and e.value.revision == "nope"
    assert "hf repos branch create org/dest nope" in e.value.hint
    assert hub.commit_requests == []


def test_push_to_a_hub_url(hub: FakeHub, ckpts: dict[str, Path], dest: str) -> None:
    hub.add_commit("org/dest", {}, ref="dev")
    code, out = run("push", str(ckpts["tiny"]), f"{hub.url}/org/dest/tree/dev/dflash", "--token", "hf_granted")
    assert code == 0, out
    files = hub.repos["org/dest"].commits[hub.repos["org/dest"].refs["dev"]]
    assert files["dflash/model.safetensors"] == (ckpts["tiny"] / "model.safetensors").read_bytes()


def test_library_logs_are_restored_after_a_request(hub: FakeHub, ckpts: dict[str, Path]) -> None:
    import logging
    hub.add_commit("org/tiny", ckpts["tiny"])
    logger = logging.getLogger("huggingface_hub")
    before = logger.level
    hub.inject("503", "/api/models/", times=1)
    open_source("org/tiny")
    assert logger.level == before
