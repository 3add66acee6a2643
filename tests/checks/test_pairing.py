"""--target: the drafter against its target model's config."""

from __future__ import annotations

import json

import pytest

from conftest import FIXTURES
from dflash2_ckpt.usecases.verify import verify

DRAFT = FIXTURES / "good" / "nested-v2"
TARGET = json.loads((FIXTURES / "targets" / "tiny-target" / "config.json").read_text())


def with_target(tmp_path, **changes):
    cfg = {**TARGET, **changes}
    (tmp_path / "config.json").write_text(json.dumps(cfg))
    return [f for f in verify(DRAFT, target=tmp_path).findings if f.code.startswith("DF5")]


def test_matching_target_has_no_findings() -> None:
    assert verify(DRAFT, target=FIXTURES / "targets" / "tiny-target").findings == ()


@pytest.mark.parametrize(
    "changes,code",
    [
        ({"vocab_size": 128}, "DF501"),
        ({"hidden_size": 48}, "DF502"),
        ({"num_hidden_layers": 2}, "DF503"),
        ({"num_hidden_layers": 6}, "DF504"),
        ({"vocab_size": 32}, "DF505"),
        ({"eos_token_id": [1, 63]}, "DF506"),
        ({"pad_token_id": 63}, "DF506"),
        ({"quantization_config": {"quant_method": "fp8"}}, "DF507"),
    ],
)
def test_each_mismatch(tmp_path, changes, code) -> None:
    assert code in {f.code for f in with_target(tmp_path, **changes)}


@pytest.mark.parametrize(
    "q",
    [
        {"quant_method": "compressed-tensors", "ignore": ["lm_head"]},
        {"quant_method": "gptq", "lm_head": False},
        {"quant_method": "awq", "modules_to_not_convert": ["lm_head"]},
    ],
)
def test_dense_head_with_quantized_body_is_fine(tmp_path, q) -> None:
    assert with_target(tmp_path, quantization_config=q) == []


def test_multimodal_text_config_is_read(tmp_path) -> None:
    found = with_target(tmp_path, text_config={"vocab_size": 100})
    assert [f.code for f in found] == ["DF501"]


def test_unreadable_target_is_df508(tmp_path) -> None:
    (tmp_path / "config.json").write_text("{oops")
    assert [f.code for f in verify(DRAFT, target=tmp_path).findings] == ["DF508"]
