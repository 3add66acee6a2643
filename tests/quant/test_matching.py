"""The header-level matcher (no torch) against compressed-tensors' own matching on real modules."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import FIXTURES
from dflash2_ckpt.checkpoint import open_checkpoint
from dflash2_ckpt.checkpoint.quant import module_classes
from dflash2_ckpt.quant.config import parse_quant_config

torch = pytest.importorskip("torch")
ct_match_lib = pytest.importorskip("compressed_tensors.utils.match")
from safetensors.torch import load_file  # noqa: E402

import quantized  # noqa: E402  (fixtures/quantized.py: the module tree the fixtures are compressed from)

DENSE = load_file(str(FIXTURES / "good" / "nested-v2" / "model.safetensors"))
TREE = quantized._module_tree(DENSE)
MODULES = dict(TREE.named_modules())
CKPT = open_checkpoint(FIXTURES / "good" / "nested-v2")
CLASSES = module_classes(CKPT)

PATTERNS = st.one_of(
    st.sampled_from(
        [
            "Linear",
            "Embedding",
            "Module",
            "fc",
            "layers.0.mlp.up_proj",
            "candidate_selector",
            "lm_head",
            "layers.1.attention_conv.kernel_projection",
        ]
    ),
    st.builds(
        lambda p: "re:" + p,
        st.sampled_from(
            [
                ".*kernel_projection$",
                ".*candidate_selector.*",
                ".*hidden_projection$",
                "layers\\.0\\..*",
                ".*proj",
                "fc",
                ".*mlp\\.(gate|up)_proj$",
                "layers.[01].self_attn.q_proj",
                "mlp",
                ".*_conv.*",
                "(?!layers).*",
            ]
        ),
    ),
)


@given(name=st.sampled_from(sorted(set(MODULES) & set(CLASSES))), target=PATTERNS)
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_one_target_matches_like_the_library(name: str, target: str) -> None:
    from dflash2_ckpt.quant.config import ct_match

    lib = ct_match_lib.match_name(name, target) or ct_match_lib._match_class(MODULES[name], target)
    assert ct_match(name, CLASSES[name], target) == lib, (name, target)


@given(ignore=st.lists(PATTERNS, max_size=4), targets=st.lists(PATTERNS, min_size=1, max_size=2))
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_which_modules_get_quantized_matches_apply_quantization_config(
    ignore: list[str], targets: list[str]
) -> None:
    from compressed_tensors.quantization import (
        QuantizationConfig,
        apply_quantization_config,
        preset_name_to_scheme,
    )

    tree = quantized._module_tree(DENSE)
    scheme = preset_name_to_scheme("W8A16", targets)
    qc = QuantizationConfig(config_groups={"group_0": scheme}, ignore=ignore)
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        apply_quantization_config(tree, qc, show_progress=False)
    lib = {n for n, m in tree.named_modules() if getattr(m, "quantization_scheme", None) is not None}
    cfg = parse_quant_config(
        {
            "quantization_config": {
                "quant_method": "compressed-tensors",
                **json.loads(qc.model_dump_json()),
                "format": "pack-quantized",
            }
        }
    )
    assert cfg is not None
    ours = {m for m, cls in CLASSES.items() if cfg.scheme_for(m, cls) is not None}
    assert ours == lib
