"""The CLI on Hub repos: JSON report fields, --target as a repo, and every failure as one line + exit 3."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest

from _kit.cli import run_output as run
from _kit.fakehub import FakeHub


def test_verify_json_states_commit_and_bytes(hub: FakeHub, ckpts: dict[str, Path]) -> None:
    sha = hub.add_commit("org/tiny", ckpts["tiny"])
    code, out = run("verify", "org/tiny", "--format", "json")
    doc = json.loads(out)
    assert code == 0 and doc["passed"]
    assert doc["commit_sha"] == sha and doc["revision"] == "main" and doc["bytes_fetched"] == hub.file_bytes()
    code, out = run("inspect", "org/tiny", "--revision", sha, "--format", "json")
    assert code == 0 and json.loads(out)["commit_sha"] == sha


def test_verify_subfolder_option_and_target_repo(hub: FakeHub, ckpts: dict[str, Path]) -> None:
    if "nested-v2" not in ckpts:
        pytest.skip("fixtures/good not built")
    root = Path(__file__).resolve().parents[2] / "fixtures" / "targets" / "tiny-target"
    hub.add_commit("org/drafter", ckpts["nested-v2"], prefix="dflash/")
    hub.add_commit("org/target", root)
    code_local, out_local = run("verify", str(ckpts["nested-v2"]), "--target", str(root), "--format", "json")
    code, out = run(
        "verify", "org/drafter", "--subfolder", "dflash", "--target", "org/target", "--format", "json"
    )
    assert code == code_local
    assert json.loads(out)["findings"] == json.loads(out_local)["findings"]


def _closed_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


@pytest.mark.parametrize(
    "case, args, expect",
    [
        ("repo-missing", ["org/missing"], "repo org/missing not found"),
        ("gated", ["org/gated"], "gated"),
        ("gated-wrong-token", ["org/gated", "--token", "hf_other"], "gated"),
        ("bad-token", ["org/tiny", "--token", "hf_unknown"], "unauthorised"),
        ("revision-missing", ["org/tiny@nope"], "revision 'nope' not found"),
        ("not-safetensors", ["org/pickles"], "not a safetensors checkpoint"),
        ("no-such-path", ["./nowhere"], "no such file or directory"),
        ("two-revisions", ["org/tiny@a", "--revision", "b"], "two revisions"),
    ],
)
def test_errors_are_one_line_and_exit_3(
    hub: FakeHub, ckpts: dict[str, Path], case: str, args: list[str], expect: str
) -> None:
    hub.add_commit("org/tiny", ckpts["tiny"])
    hub.add_commit("org/gated", ckpts["tiny"], gated=True, granted={"hf_granted"})
    hub.add_commit(
        "org/pickles",
        {"config.json": (ckpts["tiny"] / "config.json").read_bytes(), "pytorch_model.bin": b"\x80\x04K\x01."},
    )
    code, out = run("verify", *args)
    assert code == 3, out
    assert expect in out
    assert "Traceback" not in out and "hint:" in out


def test_gated_repo_opens_with_a_granted_token(hub: FakeHub, ckpts: dict[str, Path]) -> None:
    hub.add_commit("org/gated", ckpts["tiny"], gated=True, granted={"hf_granted"})
    assert run("verify", "org/gated", "--token", "hf_granted")[0] == 0


def test_network_down(hub: FakeHub, monkeypatch: pytest.MonkeyPatch) -> None:
    from huggingface_hub import constants

    dead = f"http://127.0.0.1:{_closed_port()}"
    monkeypatch.setenv("HF_ENDPOINT", dead)
    monkeypatch.setattr(constants, "ENDPOINT", dead)
    code, out = run("verify", "org/anything")
    assert code == 3 and "cannot reach" in out and "HF_HUB_OFFLINE" in out and "Traceback" not in out


def test_hub_outage(hub: FakeHub, ckpts: dict[str, Path]) -> None:
    hub.add_commit("org/tiny", ckpts["tiny"])
    hub.down = True
    code, out = run("verify", "org/tiny")
    assert code == 3 and "HTTP 503" in out and "Traceback" not in out


def test_offline_not_cached(hub: FakeHub, offline: None) -> None:
    code, out = run("verify", "org/never-downloaded")
    assert code == 3 and "not in the local cache" in out and not hub.log


def test_ci_recipe_uses_the_action_and_uploads_its_sarif() -> None:
    import yaml

    root = Path(__file__).resolve().parents[2]
    doc = yaml.safe_load((root / "docs" / "github-actions-verify.yml").read_text())
    action = yaml.safe_load((root / "action.yml").read_text())
    steps = doc["jobs"]["verify"]["steps"]
    verify = next(s for s in steps if s.get("id") == "verify")
    assert verify["uses"].split("@")[0].endswith("/dflash2-ckpt") and set(verify["with"]) <= set(
        action["inputs"]
    )
    upload = next(s for s in steps if s.get("uses", "").startswith("github/codeql-action/upload-sarif"))
    assert upload["with"]["sarif_file"] == verify["with"]["sarif-file"]


def test_offline_target_needs_only_its_config(
    hub: FakeHub, ckpts: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    from huggingface_hub import constants

    from dflash2_ckpt.checkpoint.open_source import open_source
    from dflash2_ckpt.errors import OfflineNotCachedError
    from dflash2_ckpt.sources.hub import HubSource

    root = Path(__file__).resolve().parents[2] / "fixtures" / "targets" / "tiny-target"
    hub.add_commit(
        "org/target", {"config.json": (root / "config.json").read_bytes(), "model.safetensors": b"\0" * 64}
    )
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    code, out = run("verify", str(ckpts["tiny"]), "--target", "org/target")
    assert code == 3 and "hf download org/target config.json" in out and "safetensors" not in out, out
    with pytest.raises(OfflineNotCachedError) as e:
        open_source("org/target", require_weights=False)
    assert e.value.missing == ["config.json"] and e.value.repo_id == "org/target"
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
    monkeypatch.delenv("HF_HUB_OFFLINE")
    online = open_source("org/target", require_weights=False)
    assert isinstance(online, HubSource)
    online.download("config.json")  # what `hf download org/target config.json` does
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    before = len(hub.log)
    code, out = run("verify", str(ckpts["tiny"]), "--target", "org/target")
    assert code in (0, 1) and "DF508" not in out and len(hub.log) == before, out


@pytest.mark.parametrize(
    "args, error, revision",
    [
        (["org/missing"], "RepositoryNotFoundError", "main"),
        (["org/tiny@nope"], "RevisionNotFoundError", "nope"),
        (["org/gated"], "GatedRepoError", "main"),
        (["org/tiny", "--token", "hf_unknown"], "HubAccessError", "main"),
    ],
)
def test_hub_errors_are_typed(
    hub: FakeHub, ckpts: dict[str, Path], args: list[str], error: str, revision: str
) -> None:
    from dflash2_ckpt import errors
    from dflash2_ckpt.checkpoint.open_source import open_source

    hub.add_commit("org/tiny", ckpts["tiny"])
    hub.add_commit("org/gated", ckpts["tiny"], gated=True, granted={"hf_granted"})
    token = args[2] if len(args) > 2 else None
    with pytest.raises(getattr(errors, error)) as e:
        open_source(args[0], token=token)
    assert type(e.value).__name__ == error and isinstance(e.value, errors.HubError)
    assert isinstance(e.value, errors.SourceError) and e.value.hint
    assert e.value.repo_id == args[0].split("@")[0] and e.value.revision == revision
