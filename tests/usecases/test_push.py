"""push: nothing leaves the machine unless verify passes; a passing checkpoint lands as one commit."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from _kit.cli import run_output as run
from _kit.fakehub import FakeHub
from _kit.smoke import smoke_report, stand_in_smoke
from dflash2_ckpt.checkpoint.open_source import open_source
from dflash2_ckpt.findings import Finding
from dflash2_ckpt.usecases.verify import verify
from dflash2_ckpt.usecases.verify_smoke import CheckResult


@pytest.fixture
def dest(hub: FakeHub) -> str:
    hub.add_commit("org/dest", {"README.md": b"# drafter\n"}, granted={"hf_granted"})
    return "org/dest"


def test_broken_checkpoint_is_not_uploaded(hub: FakeHub, ckpts: dict[str, Path], dest: str) -> None:
    before = len(hub.log)
    code, out = run("push", str(ckpts["tiny-broken"]), dest, "--token", "hf_granted")
    assert code == 1
    assert "DF201" in out and "nothing was uploaded" in out
    assert hub.log[before:] == [] and hub.commit_requests == []  # not even a preupload request


def test_good_checkpoint_is_uploaded_and_verifies_on_the_hub(
    hub: FakeHub, ckpts: dict[str, Path], dest: str
) -> None:
    code, out = run(
        "push", str(ckpts["tiny"]), dest, "--no-card", "--token", "hf_granted", "--format", "json"
    )
    doc = json.loads(out)
    assert code == 0 and doc["uploaded"] and doc["verify"]["passed"]
    assert len(hub.commit_requests) == 1 and hub.requests("POST", "/preupload/")
    assert doc["commit_sha"] == hub.repos["org/dest"].refs["main"]
    files = hub.repos["org/dest"].commits[doc["commit_sha"]]
    for p in ckpts["tiny"].iterdir():
        assert files[p.name] == p.read_bytes()
    assert "README.md" in files  # the rest of the repo is kept
    same = verify(open_source("org/dest", token="hf_granted"))
    assert same.to_json()["findings"] == verify(ckpts["tiny"]).to_json()["findings"]


def test_push_to_subfolder_branch_and_pr(hub: FakeHub, ckpts: dict[str, Path], dest: str) -> None:
    hub.add_commit("org/dest", {}, ref="dev")
    code, out = run(
        "push",
        str(ckpts["tiny"]),
        f"{dest}/dflash",
        "--revision",
        "dev",
        "--token",
        "hf_granted",
        "--format",
        "json",
    )
    assert code == 0
    assert "dflash/model.safetensors" in hub.repos["org/dest"].commits[hub.repos["org/dest"].refs["dev"]]
    code, out = run(
        "push",
        str(ckpts["tiny"]),
        dest,
        "--no-card",
        "--create-pr",
        "--token",
        "hf_granted",
        "--format",
        "json",
    )
    doc = json.loads(out)
    assert code == 0 and doc["pr_url"] and "refs/pr/1" in hub.repos["org/dest"].refs
    req = hub.commit_requests[-1]
    assert req["revision"] == "refs/pr/1" or req["query"].get("create_pr") == ["1"]  # with / without hf_xet
    pr = hub.repos["org/dest"].commits[hub.repos["org/dest"].refs["refs/pr/1"]]
    assert pr["model.safetensors"] == (ckpts["tiny"] / "model.safetensors").read_bytes()
    main_files = hub.repos["org/dest"].commits[hub.repos["org/dest"].refs["main"]]
    assert "model.safetensors" not in main_files  # main untouched by the PR


def test_push_errors_are_one_line(hub: FakeHub, ckpts: dict[str, Path], dest: str) -> None:
    # a missing repo is created (below); a missing repo with a branch named is not guessed at
    code, out = run("push", str(ckpts["tiny"]), "org/missing", "--revision", "dev", "--token", "hf_granted")
    assert code == 3 and "not found" in out and "hf repos create" in out and "Traceback" not in out
    assert hub.created == []
    code, out = run("push", str(ckpts["tiny"]), dest, "--no-card")  # no token: the Hub refuses the commit
    assert code == 3 and "Traceback" not in out


def test_two_revisions_are_refused_as_verify_refuses_them(
    hub: FakeHub, ckpts: dict[str, Path], dest: str
) -> None:
    """push and verify share one "two revisions given" rule (RepoRef.one_revision), hint included."""
    for argv in (
        ["push", str(ckpts["tiny"]), f"{dest}@a", "--revision", "b", "--token", "hf_granted"],
        ["verify", f"{dest}@a", "--revision", "b"],
    ):
        code, out = run(*argv)
        assert (
            code == 3
            and "two revisions given: @a and --revision b" in out
            and "give the revision once" in out
        )
    assert hub.commit_requests == []


def test_smoke_without_the_extra_is_exit_3(
    hub: FakeHub, ckpts: dict[str, Path], dest: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "dflash2_ckpt.smoke", None)  # as if the [smoke] extra were missing
    code, out = run("push", str(ckpts["tiny"]), dest, "--no-card", "--smoke", "--token", "hf_granted")
    assert code == 3 and "smoke" in out and hub.commit_requests == []


def test_smoke_refusal_uploads_nothing(
    hub: FakeHub, ckpts: dict[str, Path], dest: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    stand_in_smoke(monkeypatch, Finding("DF703", "NaN in the conv"))
    code, out = run("push", str(ckpts["tiny"]), dest, "--no-card", "--smoke", "--token", "hf_granted")
    assert code == 1 and "refused by smoke" in out and hub.commit_requests == []


def test_smoke_failed_reads_the_smoke_findings(ckpts: dict[str, Path]) -> None:
    """The smoke result is one type (SmokeReport): no smoke never fails, its findings decide otherwise."""
    report = verify(ckpts["tiny"])
    assert not CheckResult(report).smoke_failed(strict=True)
    warned = smoke_report(Finding("DF705", "inert conv"))
    result = CheckResult(report, warned, tuple(warned.findings))
    assert not result.smoke_failed() and result.smoke_failed(strict=True)
    broken = smoke_report(Finding("DF703", "NaN in the conv"))
    assert CheckResult(report, broken, tuple(broken.findings)).failed()


def test_push_offline_is_one_line_and_immediate(
    hub: FakeHub, ckpts: dict[str, Path], dest: str, offline: None
) -> None:
    import time

    t0 = time.monotonic()
    code, out = run("push", str(ckpts["tiny"]), dest, "--no-card", "--token", "hf_granted")
    assert code == 3 and time.monotonic() - t0 < 3 and not hub.log
    assert "HF_HUB_OFFLINE" in out and "unset HF_HUB_OFFLINE" in out and "download" not in out
    assert len(out.strip().splitlines()) == 2, out  # one line, one hint


def test_push_with_no_network_fails_fast_without_library_logs(
    hub: FakeHub, ckpts: dict[str, Path], dest: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    import socket
    import time

    from huggingface_hub import constants

    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    dead = f"http://127.0.0.1:{s.getsockname()[1]}"
    s.close()
    monkeypatch.setenv("HF_ENDPOINT", dead)
    monkeypatch.setattr(constants, "ENDPOINT", dead)
    monkeypatch.delenv("DFLASH2_CKPT_HUB_BACKOFF")  # the default policy a user gets
    t0 = time.monotonic()
    code, out = run("push", str(ckpts["tiny"]), dest, "--no-card", "--token", "hf_granted")
    took = time.monotonic() - t0
    assert code == 3 and took < 5, (took, out)
    assert "cannot reach" in out and "Retrying" not in out and "Traceback" not in out
    assert len(out.strip().splitlines()) == 2, out


def test_push_to_a_missing_branch_says_how_to_create_it(
    hub: FakeHub, ckpts: dict[str, Path], dest: str
) -> None:
    from dflash2_ckpt.errors import RevisionNotFoundError
    from dflash2_ckpt.usecases.push import push

    with pytest.raises(RevisionNotFoundError) as e:
        push(ckpts["tiny"], dest, revision="nope", token="hf_granted")
    assert e.value.repo_id == "org/dest" and e.value.revision == "nope"
    assert "hf repos branch create org/dest nope" in e.value.hint
    assert hub.commit_requests == []


def test_push_to_a_hub_url(hub: FakeHub, ckpts: dict[str, Path], dest: str) -> None:
    hub.add_commit("org/dest", {}, ref="dev")
    code, out = run(
        "push", str(ckpts["tiny"]), f"{hub.url}/org/dest/tree/dev/dflash", "--token", "hf_granted"
    )
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


def test_pickles_stay_home_unless_included(
    hub: FakeHub, ckpts: dict[str, Path], dest: str, tmp_path: Path
) -> None:
    import shutil

    d = tmp_path / "d"
    shutil.copytree(ckpts["tiny"], d)
    (d / "optimizer.pt").write_bytes(b"\x80\x04pickle")
    code, out = run("push", str(d), dest, "--token", "hf_granted", "--format", "json")
    doc = json.loads(out)
    assert code == 0 and doc["uploaded"] and doc["excluded"] == ["optimizer.pt"]
    assert "optimizer.pt" not in hub.repos["org/dest"].commits[hub.repos["org/dest"].refs["main"]]
    code, out = run("push", str(d), dest, "--token", "hf_granted")
    assert "left out: optimizer.pt" in out
    code, out = run("push", str(d), dest, "--token", "hf_granted", "--include-pickles")
    assert code == 0 and "optimizer.pt" in hub.repos["org/dest"].commits[hub.repos["org/dest"].refs["main"]]


def test_no_token_says_none_was_found_and_how_to_log_in(
    hub: FakeHub, ckpts: dict[str, Path], dest: str
) -> None:
    before = len(hub.requests())
    code, out = run("push", str(ckpts["tiny"]), dest, "--format", "json")
    err = json.loads(out)["error"]
    assert code == 3 and "no Hugging Face token found" in err["message"] and "rejected" not in err["message"]
    assert "hf auth login" in err["hint"] and "HF_TOKEN" in err["hint"]
    assert len(hub.requests()) == before  # nothing was sent


@pytest.fixture
def drafter(ckpts: dict[str, Path], tmp_path: Path) -> Path:
    """A copy of the tiny flat DFlash2 drafter (its speculators_config names tiny/verifier), to write a card in."""
    import shutil

    return Path(shutil.copytree(ckpts["tiny"], tmp_path / "drafter"))


def _front_matter(text: str) -> dict[str, object]:
    import yaml

    assert text.startswith("---\n")
    return dict(yaml.safe_load(text.split("---\n")[1]))


def test_push_writes_the_model_card_front_matter(hub: FakeHub, drafter: Path, dest: str) -> None:
    hub.add_commit("tiny/verifier", {"README.md": b"---\nlicense: apache-2.0\n---\n# the target\n"})
    (drafter / "README.md").write_text("# my drafter\n\nTrained on things.\n")
    code, out = run("push", str(drafter), dest, "--token", "hf_granted", "--format", "json")
    doc = json.loads(out)
    assert code == 0 and doc["uploaded"]
    uploaded = hub.repos["org/dest"].commits[doc["commit_sha"]]["README.md"]
    assert isinstance(uploaded, bytes)
    meta = _front_matter(uploaded.decode())
    assert meta == {
        "base_model": "tiny/verifier",
        "base_model_relation": "adapter",
        "license": "apache-2.0",
        "tags": ["dflash", "dflash2", "speculative-decoding", "draft-model"],
        "library_name": "speculators",
        "pipeline_tag": "text-generation",
    }
    assert "Trained on things." in uploaded.decode()
    assert (drafter / "README.md").read_bytes() == uploaded  # the local card is the uploaded one
    assert [f["code"] for f in doc["card"]["findings"]] == ["DF621"]


def test_a_card_naming_another_base_model_refuses_the_push(hub: FakeHub, drafter: Path, dest: str) -> None:
    card = "---\nbase_model: Qwen/Qwen3-8B\ntags: [dflash]\n---\n# drafter\n"
    (drafter / "README.md").write_text(card)
    before = len(hub.log)
    code, out = run("push", str(drafter), dest, "--token", "hf_granted")
    assert code == 1 and "DF620" in out and "tiny/verifier" in out and "refused by card" in out
    assert hub.log[before:] == [] and (drafter / "README.md").read_text() == card  # nothing sent or changed


def test_a_card_tagged_with_the_other_version_is_a_contradiction(drafter: Path) -> None:
    from dflash2_ckpt.usecases.model_card import plan_card

    (drafter / "README.md").write_text("---\ntags: [dflash-v1]\n---\n")
    plan = plan_card(drafter, "v2", "flat")
    assert [(f.code, f.field) for f in plan.findings if f.code == "DF620"] == [("DF620", "tags")]


def test_push_includes_the_accept_table_once(hub: FakeHub, drafter: Path, dest: str, tmp_path: Path) -> None:
    table = tmp_path / "tau.md"
    table.write_text("| prompts | tau |\n|---|---|\n| 8 | 3.10 |\n")
    for _ in range(2):  # a second push replaces, not appends
        code, out = run("push", str(drafter), dest, "--token", "hf_granted", "--accept-table", str(table))
        assert code == 0, out
    text = (drafter / "README.md").read_text()
    assert text.count("| 8 | 3.10 |") == 1 and text.count("<!-- dflash2-ckpt:accept -->") == 1


def test_push_creates_a_missing_repo_private(hub: FakeHub, drafter: Path) -> None:
    hub.tokens.add("hf_writer")
    code, out = run(
        "push", str(drafter), "org/brand-new", "--token", "hf_writer", "--private", "--format", "json"
    )
    doc = json.loads(out)
    assert code == 0 and doc["created"] and doc["uploaded"], out
    assert hub.created == [
        {"repo": "org/brand-new", "name": "brand-new", "organization": "org", "visibility": "private"}
    ]
    repo = hub.repos["org/brand-new"]
    assert repo.private and "model.safetensors" in repo.commits[repo.refs["main"]]


def test_delete_drops_stale_shards_in_the_same_commit(hub: FakeHub, drafter: Path) -> None:
    """A re-export with fewer shards: --delete removes the old ones from the Hub, never what is uploaded."""
    hub.add_commit(
        "org/dest",
        {
            "model-00001-of-00002.safetensors": b"old",
            "model-00002-of-00002.safetensors": b"old",
            "notes.txt": b"keep",
        },
        granted={"hf_granted"},
    )
    code, out = run("push", str(drafter), "org/dest", "--token", "hf_granted", "--delete", "*.safetensors")
    assert code == 2 and "model-00001-of-00002.safetensors, model-00002-of-00002.safetensors" in out, out
    assert "--yes" in out and hub.commit_requests == []  # listed, refused, nothing sent
    code, out = run(
        "push", str(drafter), "org/dest", "--token", "hf_granted", "--delete", "*.safetensors", "--yes"
    )
    assert code == 0, out
    assert "deleted   model-00001-of-00002.safetensors" in out and "kept      notes.txt" in out, out
    files = hub.repos["org/dest"].commits[hub.repos["org/dest"].refs["main"]]
    assert sorted(p for p in files if p.endswith(".safetensors")) == ["model.safetensors"]
    assert files["model.safetensors"] == (drafter / "model.safetensors").read_bytes() and "notes.txt" in files
    assert len(hub.commit_requests) == 1


def test_include_and_exclude_select_the_files_as_hf_upload_does(
    hub: FakeHub, drafter: Path, dest: str
) -> None:
    (drafter / "train.log").write_text("loss 1.0\n")
    code, out = run("push", str(drafter), dest, "--token", "hf_granted", "--no-card", "--exclude", "*.log")
    assert code == 0, out
    files = hub.repos["org/dest"].commits[hub.repos["org/dest"].refs["main"]]
    assert "train.log" not in files and "model.safetensors" in files
    code, out = run(
        "push", str(drafter), "org/other", "--token", "hf_granted", "--no-card", "--include", "*.json"
    )
    assert code == 0, out
    files = hub.repos["org/other"].commits[hub.repos["org/other"].refs["main"]]
    assert "config.json" in files and "model.safetensors" not in files and "train.log" not in files


def test_dry_run_shows_the_plan_and_the_card_diff_and_sends_nothing(hub: FakeHub, drafter: Path) -> None:
    config = (drafter / "config.json").read_bytes()
    hub.add_commit(
        "org/dest",
        {
            "README.md": b"---\nlicense: mit\n---\n# drafter\n",
            "config.json": config,
            "model-00001-of-00002.safetensors": b"old",
        },
        granted={"hf_granted"},
    )
    before = (dict(hub.repos["org/dest"].refs), sorted(p.name for p in drafter.iterdir()))
    code, out = run(
        "push",
        str(drafter),
        "org/dest",
        "--token",
        "hf_granted",
        "--dry-run",
        "--delete",
        "*.safetensors",
        "--format",
        "json",
    )
    doc = json.loads(out)
    assert code == 0 and doc["dry_run"] and not doc["uploaded"], out
    assert doc["plan"] == {
        "upload": ["README.md", "model.safetensors"],
        "delete": ["model-00001-of-00002.safetensors"],
        "unchanged": ["config.json"],
        "kept": [],
    }
    diff = doc["card_diff"].splitlines()
    assert (
        diff[:2] == ["--- hub/README.md", "+++ local/README.md"]
        and "-# drafter" in diff
        and "+# dest" in diff
    )
    assert "+base_model: tiny/verifier" in diff and " ---" in diff  # the unchanged line as context
    assert hub.commit_requests == [] and hub.requests("POST") == []
    assert (dict(hub.repos["org/dest"].refs), sorted(p.name for p in drafter.iterdir())) == before
    code, out = run("push", str(drafter), "org/dest", "--token", "hf_granted", "--dry-run")
    assert code == 0 and "upload    model.safetensors" in out and "unchanged config.json" in out
    assert "nothing was uploaded" in out


def test_dry_run_for_a_new_repo_shows_the_whole_card_without_a_token(hub: FakeHub, drafter: Path) -> None:
    code, out = run("push", str(drafter), "org/new", "--dry-run", "--format", "json")
    doc = json.loads(out)
    assert code == 0 and doc["created"] and hub.created == [] and hub.commit_requests == [], out
    assert doc["card_diff"].startswith("--- /dev/null") and "README.md" in doc["plan"]["upload"]
    assert not (drafter / "README.md").exists()


def test_dry_run_of_a_broken_checkpoint_is_refused(hub: FakeHub, ckpts: dict[str, Path], dest: str) -> None:
    code, out = run("push", str(ckpts["tiny-broken"]), dest, "--dry-run", "--token", "hf_granted")
    assert code == 1 and "refused by verify" in out


def test_a_new_card_says_what_the_drafter_is_and_how_to_serve_it(
    hub: FakeHub, drafter: Path, dest: str
) -> None:
    from dflash2_ckpt.version import package_version

    code, out = run("push", str(drafter), dest, "--token", "hf_granted")
    assert code == 0, out
    text = (drafter / "README.md").read_text()
    body = text.split("---\n", 2)[2]
    assert (
        body.startswith("# dest\n")
        and "draft model for [tiny/verifier](https://huggingface.co/tiny/verifier)" in body
    )
    # compat: vLLM loads the flat drafter (its newest profile); SGLang reads the nested dialect only
    assert "vllm serve tiny/verifier --speculative-config" in body and '"model": "org/dest"' in body
    assert "sglang" not in body and str(drafter) not in body  # the Hub id, never the local path
    assert f"dflash2-ckpt {package_version()}" in body
    assert "license" not in _front_matter(text)  # the target's card is not on the Hub
    code, out = run("push", str(drafter), dest, "--token", "hf_granted")
    again = (drafter / "README.md").read_text()
    assert again == text and again.count("## Serving") == 1  # a second push changes nothing


def test_a_nested_v2_card_names_no_library_that_cannot_load_it(
    hub: FakeHub, ckpts: dict[str, Path], dest: str, tmp_path: Path
) -> None:
    import shutil

    d = Path(shutil.copytree(ckpts["nested-v2"], tmp_path / "nested"))
    code, out = run("push", str(d), dest, "--token", "hf_granted", "--format", "json")
    assert code == 0, out
    meta = _front_matter((d / "README.md").read_text())
    assert "library_name" not in meta  # compat: transformers refuses it
    body = (d / "README.md").read_text()
    assert [f["code"] for f in json.loads(out)["card"]["findings"]] == ["DF621"]
    assert (
        "vllm serve TARGET" in body
        and "python -m sglang.launch_server" in body
        and "llama-server" not in body
    )


def test_a_failing_accept_table_shows_failed_in_the_card(
    hub: FakeHub, drafter: Path, dest: str, tmp_path: Path
) -> None:
    from dflash2_ckpt.accept.report import AcceptReport, PromptResult
    from dflash2_ckpt.accept.stats import Interval
    from dflash2_ckpt.report.accept_tables import markdown

    tau = Interval(1.3, 1.1, 1.5, 9)
    report = AcceptReport(
        "org/dest",
        "tiny/verifier",
        "cpu",
        "sdpa",
        8,
        32,
        "built-in",
        tau,
        0.05,
        [0.2] * 7,
        9.0,
        10.0,
        {"baseline": 32, "speculative": 25, "saved": 7},
        [PromptResult("p0", 8, 32, 25, tau, [0] * 25, True, 9.0, 10.0)],
        findings=[Finding("DF751", "τ 1.30 below 2.6")],
    )
    table = tmp_path / "tau.md"
    table.write_text(markdown(report))
    code, out = run("push", str(drafter), dest, "--token", "hf_granted", "--accept-table", str(table))
    assert code == 0, out
    assert "**FAILED (DF751)**" in (drafter / "README.md").read_text()


def test_a_card_naming_a_library_that_cannot_load_the_drafter_is_warned(
    hub: FakeHub, ckpts: dict[str, Path], dest: str, tmp_path: Path
) -> None:
    import shutil

    d = Path(shutil.copytree(ckpts["nested-v2"], tmp_path / "nested"))
    (d / "README.md").write_text("---\nlibrary_name: transformers\n---\n# nested\n")
    code, out = run("push", str(d), dest, "--token", "hf_granted")
    assert code == 0 and "DF622" in out and "library_name: transformers" in out, out


def test_push_judges_the_directory_by_its_per_path_settings(
    hub: FakeHub, ckpts: dict[str, Path], dest: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import shutil

    shutil.copytree(ckpts["tiny-broken"], tmp_path / "drafters" / "known")
    (tmp_path / "pyproject.toml").write_text(
        '[tool.dflash2-ckpt.per-path."drafters/known"]\nignore = ["DF201"]\n'
    )
    monkeypatch.chdir(tmp_path)
    code, out = run("push", "drafters/known", dest, "--no-card", "--token", "hf_granted", "--format", "json")
    assert code == 0 and json.loads(out)["uploaded"]
    code, out = run("push", "drafters/known", dest, "--no-card", "--select", "DF201", "--token", "hf_granted")
    assert code == 0  # the entry's ignore stays under the command line's select, as ruff's per-file-ignores


def test_a_new_card_records_the_target_tokenizer_the_drafter_was_converted_against(
    hub: FakeHub, drafter: Path, dest: str
) -> None:
    from dflash2_ckpt.formats.keys import TOKENIZER_KEY

    cfg = json.loads((drafter / "config.json").read_text())
    cfg[TOKENIZER_KEY] = "ab" * 32
    (drafter / "config.json").write_text(json.dumps(cfg))
    code, out = run("push", str(drafter), dest, "--token", "hf_granted")
    assert code == 0, out
    assert f"Target tokenizer: `sha256:{'ab' * 32}`" in (drafter / "README.md").read_text()


def test_push_takes_its_options_as_one_object(hub: FakeHub, ckpts: dict[str, Path], dest: str) -> None:
    from dflash2_ckpt.errors import RevisionNotFoundError
    from dflash2_ckpt.usecases.push import PushOptions, push

    with pytest.raises(RevisionNotFoundError) as e:
        push(ckpts["tiny"], dest, PushOptions(revision="nope", token="hf_granted"))
    assert e.value.revision == "nope" and hub.commit_requests == []
