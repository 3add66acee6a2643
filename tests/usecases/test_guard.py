"""require_version: refuses v2-as-v1 from config or headers, and never refuses a genuine v1."""

from __future__ import annotations

import json

import pytest

from conftest import FIXTURES, real_config
from dflash2_ckpt import ConfigError, VersionMismatchError, require_version
from dflash2_ckpt.checkpoint import open_checkpoint
from dflash2_ckpt.checkpoint.layout import v2_bytes

GOOD, BROKEN = FIXTURES / "good", FIXTURES / "broken"


@pytest.mark.parametrize("name", ["nested-v1", "flat-v1"])
def test_genuine_v1_passes_a_v1_loader(name: str) -> None:
    assert require_version(GOOD / name, expected="v1") == "v1"
    assert require_version(json.loads((GOOD / name / "config.json").read_text()), expected="v1") == "v1"


@pytest.mark.parametrize("name", ["nested-v2", "flat-v2"])
def test_v2_passes_a_v2_loader_and_is_refused_by_v1(name: str) -> None:
    assert require_version(GOOD / name, expected="v2") == "v2"
    with pytest.raises(VersionMismatchError) as e:
        require_version(GOOD / name, expected="v1")
    assert e.value.found == "v2" and e.value.expected == "v1"
    assert e.value.dropped_bytes == v2_bytes(open_checkpoint(GOOD / name).tensors.values()) > 0


def test_real_config_refused_from_config_alone() -> None:
    with pytest.raises(VersionMismatchError, match="drops the conv and selector"):
        require_version(real_config("z-lab_Qwen3.8-27B-DFlash2"), expected="v1")
    assert require_version(real_config("z-lab_Qwen3-4B-DFlash-b16"), expected="v1") == "v1"


def test_v2_tensors_under_v1_architecture_refused_with_bytes() -> None:
    with pytest.raises(VersionMismatchError) as e:
        require_version(BROKEN / "v2-tensors-under-v1", expected="v1")
    assert e.value.found == "v2" and e.value.dropped_bytes > 0


def test_contradictory_config_refused() -> None:
    with pytest.raises(VersionMismatchError, match="contradicts"):
        require_version(BROKEN / "v1-arch-with-v2-keys", expected="v1")


def test_not_dflash_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="DSpark"):
        require_version(real_config("deepseek-ai_dspark_qwen3_8b_block7"), expected="v1")
