"""`python -m dflash2_ckpt.engines.wheels check NAME==VERSION` on tiny synthetic releases (zip files built here):
which citations hold, which architectures and config keys no profile knows, and the exit code."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

from dflash2_ckpt.engines import by_engine
from dflash2_ckpt.engines.release_check import _current_cites
from dflash2_ckpt.engines.vllm import SCAN
from dflash2_ckpt.engines.wheels import main

REGISTRY = "vllm/model_executor/models/registry.py"
DFLASH = "vllm/model_executor/models/qwen3_dflash.py"


def _release(
    root: Path,
    version: str,
    *,
    drop: int = 0,
    extra_names: tuple[str, ...] = (),
    missing_name: str | None = None,
    extra_source: str = "",
) -> Path:
    """A vllm wheel holding every anchor the current citations name (but the first `drop`), and a registry
    naming what the newest profile loads."""
    files: dict[str, str] = {}
    cites = [c for c in _current_cites("vllm", by_engine("vllm")) if not c.absent]
    for c in cites[drop:]:
        if missing_name is None or f'"{missing_name}"' not in c.anchor:  # a name gone takes its citation
            files[c.path] = files.get(c.path, "") + c.anchor + "\n"
    names = [a for a in by_engine("vllm")[-1].architectures if a != missing_name] + list(extra_names)
    files[REGISTRY] = files.get(REGISTRY, "") + "".join(f'    "{n}": ("m", "C"),\n' for n in names)
    files[DFLASH] = files.get(DFLASH, "") + extra_source
    wheel = root / f"vllm-{version}-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as z:
        for path, text in files.items():
            z.writestr(path, text)
    return wheel


def test_a_release_that_changes_nothing_exits_0(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _release(tmp_path, "9.9.9")
    assert main(["check", "vllm==9.9.9", "--dir", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    n = len(_current_cites("vllm", by_engine("vllm")))
    assert out.startswith("vllm vllm==9.9.9: nothing unknown; newer than the newest release checked")
    assert f"citations: {n} hold, 0 break" in out


def test_a_release_that_changes_something_names_it_and_exits_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _release(
        tmp_path,
        "9.9.9",
        drop=1,
        extra_names=("DFlash3DraftModel",),
        missing_name="DFlash2DraftModel",
        extra_source='x = getattr(config, "brand_new_knob", 0)\ny = self.config.other_new_knob\n',
    )
    assert main(["check", "vllm==9.9.9", "--dir", str(tmp_path)]) == 1
    out = capsys.readouterr().out
    [first] = [c for c in _current_cites("vllm", by_engine("vllm")) if not c.absent][:1]
    assert f"breaks: {first}" in out and "0 break" not in out
    assert "architectures no profile knows: DFlash3DraftModel" in out
    assert "architectures gone from the registry: DFlash2DraftModel" in out
    assert "brand_new_knob" in out and "other_new_knob" in out
    assert f"brand_new_knob: {DFLASH}" in out


def test_reviewed_names_are_not_unknown(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    reviewed = sorted(SCAN.reviewed_architectures)[:2]
    _release(
        tmp_path,
        "9.9.9",
        extra_names=tuple(reviewed),
        extra_source=f'z = getattr(config, "{sorted(SCAN.reviewed_keys)[0]}", None)\n',
    )
    assert main(["check", "vllm==9.9.9", "--dir", str(tmp_path)]) == 0, capsys.readouterr().out


def test_an_unknown_distribution_is_a_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "not-an-engine==1.0", "--dir", str(tmp_path)]) == 2
    assert "no engine profile reads 'not-an-engine'" in capsys.readouterr().err


def test_sglang_names_come_from_its_entry_class(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    model = (
        "class DFlashAttention:\n    pass\n\n"
        "EntryClass = [\n    DFlashDraftModel,\n    DFlash2DraftModel,\n    DFlash3DraftModel,\n]\n"
    )
    utils = 'x = _cfg_get(draft_hf_config, "brand_new_knob", None)\n'
    with zipfile.ZipFile(tmp_path / "sglang-9.9.9-py3-none-any.whl", "w") as z:
        z.writestr("sglang/srt/models/dflash.py", model)
        z.writestr("sglang/srt/speculative/dflash_utils.py", utils)
    assert main(["check", "sglang==9.9.9", "--dir", str(tmp_path)]) == 1
    out = capsys.readouterr().out
    assert "architectures no profile knows: DFlash3DraftModel\n" in out  # not DFlashAttention
    assert "brand_new_knob: sglang/srt/speculative/dflash_utils.py" in out
