"""The hooks through the real `pre-commit try-repo`, against a throwaway publisher repo.

try-repo clones the hook repository at a commit and pip-installs it into a fresh environment. The
working tree here is not committed yet (and try-repo ignores untracked files), so the test commits a
copy of the package files to a temporary git repo and points try-repo at that. The environment is
built once per session (~10 s); pip is pointed at the local package mirror when there is one, so
no test reaches the internet where the mirror exists.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "fixtures"

pytestmark = [
    pytest.mark.slow,  # each test pip-installs the package into a fresh environment (about 50 s)
    pytest.mark.skipif(
        shutil.which("pre-commit") is None or shutil.which("git") is None, reason="needs pre-commit and git"
    ),
    pytest.mark.skipif(not (FIXTURES / "good" / "nested-v2").is_dir(), reason="fixtures not built"),
]


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.email=t@example.com", "-c", "user.name=t", "-c", "commit.gpgsign=false", *args],
        cwd=cwd,
        check=True,
        capture_output=True,
    )


@pytest.fixture(scope="session")
def env(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    base = tmp_path_factory.mktemp("precommit")
    src = base / "hooksrc"
    src.mkdir()
    for name in ("pyproject.toml", "README.md", ".pre-commit-hooks.yaml"):
        shutil.copy(ROOT / name, src / name)
    shutil.copytree(ROOT / "dflash2_ckpt", src / "dflash2_ckpt", ignore=shutil.ignore_patterns("__pycache__"))
    _git(src, "init", "-q")
    _git(src, "add", "-A")
    _git(src, "commit", "-qm", "hooks")
    e = {k: v for k, v in os.environ.items() if not k.startswith(("PRE_COMMIT", "GIT_"))}
    e["PRE_COMMIT_HOME"] = str(base / "cache")
    if Path("/opt/pypi/simple").is_dir():
        e["PIP_INDEX_URL"] = "file:///opt/pypi/simple"
        extra = [f"file://{p}" for p in ("/opt/pypi-more/simple",) if Path(p).is_dir()]
        e["PIP_EXTRA_INDEX_URL"] = " ".join(extra)
    # the local mirror may lack a dependency (google-re2): .ci/run puts its wheel beside the engine wheels
    wheels = Path(os.environ.get("DFLASH2_WHEELS", Path.home() / ".cache" / "dflash2-ckpt" / "wheels"))
    if wheels.is_dir():
        e["PIP_FIND_LINKS"] = " ".join(x for x in (e.get("PIP_FIND_LINKS", ""), str(wheels)) if x)
    e["HOOKSRC"] = str(src)
    yield e


@pytest.fixture
def publisher(tmp_path: Path) -> Path:
    repo = tmp_path / "drafters"
    repo.mkdir()
    _git(repo, "init", "-q")
    shutil.copytree(FIXTURES / "good" / "nested-v2", repo / "good")
    shutil.copytree(FIXTURES / "broken" / "tensor-missing", repo / "missing")
    shutil.copytree(FIXTURES / "broken" / "mask-id-out-of-vocab", repo / "badconfig")
    _git(repo, "add", "-A")
    return repo


def try_repo(env: dict[str, str], repo: Path, hook: str, *files: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["pre-commit", "try-repo", env["HOOKSRC"], hook, "--files", *files],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_verify_hook(env: dict[str, str], publisher: Path) -> None:
    ok = try_repo(env, publisher, "dflash2-ckpt-verify", "good/config.json", "good/model.safetensors")
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert "Passed" in ok.stdout
    bad = try_repo(env, publisher, "dflash2-ckpt-verify", "good/config.json", "missing/model.safetensors")
    assert bad.returncode == 1 and "DF201" in bad.stdout and "Failed" in bad.stdout


def test_config_hook(env: dict[str, str], publisher: Path) -> None:
    ok = try_repo(env, publisher, "dflash2-ckpt-config", "good/config.json", "missing/config.json")
    assert ok.returncode == 0, ok.stdout + ok.stderr  # missing tensors are not its business
    bad = try_repo(env, publisher, "dflash2-ckpt-config", "badconfig/config.json")
    assert bad.returncode == 1 and "DF106" in bad.stdout
