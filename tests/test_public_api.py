"""The public Python API is the package module itself: every name it exports resolves, docs/library.md
names each, and the old shim paths are gone."""

from __future__ import annotations

import importlib

import pytest

import dflash2_ckpt
from conftest import FIXTURES, ROOT


def test_every_exported_name_resolves_and_is_documented() -> None:
    page = (ROOT / "docs" / "library.md").read_text()
    for name in dflash2_ckpt.__all__:
        assert getattr(dflash2_ckpt, name) is not None
        assert f"`{name}`" in page or f"dflash2_ckpt.{name}(" in page, name


def test_compat_and_check_are_the_command_lines_own() -> None:
    r = dflash2_ckpt.compat(str(FIXTURES / "good" / "nested-v2"), engines=["vllm@0.29.0"])
    assert isinstance(r, dflash2_ckpt.CompatReport) and [v.verdict for v in r.verdicts] == ["loads"]
    result = dflash2_ckpt.check(str(FIXTURES / "good" / "nested-v2"))
    assert isinstance(result, dflash2_ckpt.CheckResult) and not result.failed()


@pytest.mark.parametrize("old", ["dflash2_ckpt.compat", "dflash2_ckpt.gate"])
def test_the_old_shim_modules_are_gone(old: str) -> None:
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module(old)
