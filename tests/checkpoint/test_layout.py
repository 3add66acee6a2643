"""The tensor-role table: one decision per name, and verify, convert and the smoke loader follow it."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conftest import FIXTURES, REAL
from dflash2_ckpt.checkpoint import open_checkpoint
from dflash2_ckpt.checkpoint.layout import (
    COMPONENTS,
    ROLE_TABLE,
    bytes_by_component,
    expected_tensors,
    role_of,
)
from dflash2_ckpt.checkpoint.quant import build_view
from dflash2_ckpt.checks.quant import quant_findings
from dflash2_ckpt.checks.tensors import check_tensors
from dflash2_ckpt.convert.plan import tensor_fate
from dflash2_ckpt.sources import LocalSource
from dflash2_ckpt.sources.safetensors_header import TensorInfo

# names seen in the wild (docs/contract.md#the-flat-dialect, #names-seen-in-the-wild) that no fixture
# file carries
WILD = [
    "embed_tokens.weight",
    "lm_head.weight",
    "model.embed_tokens.weight",
    "model.lm_head.weight",
    "verifier_lm_head.weight",
    "verifier_norm.weight",
    "t2d",
    "d2t",
    "d2t.weight",
    "encoder.fc.weight",
    "encoder.output_norm_enc.weight",
    "model.fc.weight",
    "model.layers.0.self_attn.q_proj.weight",
    "layers.0.mlp.up_proj.weight_scale",
    "fc.weight_packed",
    "layers.0.mlp.down_proj.qweight",
    "model.layers.0.mlp.up_proj.weight_packed",
    "rotary_emb.inv_freq",
    "something_else",
]


def _fixture_names() -> list[str]:
    names: set[str] = set()
    for path in FIXTURES.rglob("*.safetensors"):
        ckpt_dir = path.parent
        try:
            names |= set(open_checkpoint(ckpt_dir).tensors)
        except Exception:  # a fixture that cannot be opened at all has no names to agree on
            continue
    for tsv in REAL.glob("*.tensors.tsv"):
        for line in tsv.read_text().splitlines():
            if line and not line.startswith("#"):
                names.add(line.split("\t")[0])
    return sorted(names)


NAMES = sorted(set(_fixture_names()) | set(WILD))


def test_fixture_names_are_found() -> None:
    # the real 27B listing alone has 81 names; the broken fixtures add the codebook alias and quantized names
    assert len(NAMES) > 100
    assert "candidate_selector.predecessor_codebook.weight" in NAMES and "fc.weight_scale" in NAMES


@pytest.fixture(scope="module")
def good():
    return open_checkpoint(LocalSource(FIXTURES / "good" / "nested-v2"))


def _verify_codes(good, name: str) -> set[str]:
    """Codes that verify's tensor family raises about `name` added to a clean v2 checkpoint."""
    tensors = dict(good.tensors)
    canonical = role_of(name).canonical
    shape = tensors[canonical].shape if canonical in tensors else (1,)
    tensors.pop(canonical, None)  # an alias stands in for the part it names
    tensors[name] = TensorInfo(name, "BF16", shape, 0, 2, "model.safetensors")
    good.tensors, saved = tensors, good.tensors
    good.quant, saved_view = build_view(good), good.quant  # the view opening would have built for them
    try:
        found = check_tensors(good) + quant_findings(good)
    finally:
        good.tensors, good.quant = saved, saved_view
    return {f.code for f in found if f.tensor == name or name in f.details.get("tensors", [])}


@pytest.mark.parametrize("name", NAMES)
def test_verify_convert_and_smoke_agree_on_the_role(good, name: str) -> None:
    r = role_of(name)
    expected = {e.name for e in expected_tensors(good.spec)}

    # verify
    codes = _verify_codes(good, name)
    want = {
        "target-copy": {"DF207"},
        "vocab-map": {"DF210"},
        "quant-aux": {"DF227"},
        "unknown": {"DF202"},
        # a quantized module's alias: checks/quant.py reports its tensors without a config (DF227)
        "alias": {"DF227"} if role_of(r.canonical).role == "quant-aux" else {r.rule.code},
    }.get(r.role, set() if name in expected else {"DF202"})
    assert codes == want, (r.role, codes)

    # convert
    dst, _ = tensor_fate(name)
    if r.role in ("target-copy", "vocab-map"):
        assert dst is None
    elif r.role == "alias":
        assert dst == r.canonical != name
    else:
        assert dst == name

    # smoke
    pytest.importorskip("torch")
    from dflash2_ckpt.smoke.weights import destination

    where, param = destination(name)
    if r.role in ("trunk", "conv", "selector", "alias"):
        assert (where, param) == ("param", r.canonical)
    elif r.role in ("target-copy", "vocab-map"):
        assert where in ("borrowed", "ignored")
    else:
        assert where == "not-consumed"


def test_verifier_lm_head_is_one_thing_everywhere() -> None:
    """The disagreement that motivated the table: a copy of the target's head in all three."""
    pytest.importorskip("torch")
    from dflash2_ckpt.smoke.weights import destination

    assert role_of("verifier_lm_head.weight").role == "target-copy"
    assert tensor_fate("verifier_lm_head.weight")[0] is None
    assert destination("verifier_lm_head.weight") == ("borrowed", "lm_head.weight")


def test_every_row_of_the_table_is_reachable() -> None:
    for rule in ROLE_TABLE:
        assert any(role_of(n).rule is rule for n in NAMES), rule


@given(st.text(alphabet="abcdefghijklmnopqrstuvwxyz._0123456789", max_size=60))
def test_role_of_is_total_and_components_are_known(name: str) -> None:
    r = role_of(name)
    assert r.component in COMPONENTS
    if r.canonical != name:
        assert r.role == "alias"
    if r.role == "alias":  # an alias always names a drafter part, never another alias or a copy
        assert role_of(r.canonical).role in ("trunk", "conv", "selector")


def test_bytes_by_component_counts_every_byte_once() -> None:
    ckpt = open_checkpoint(FIXTURES / "broken" / "quantized-tensors")
    by = bytes_by_component(ckpt.tensors.values())
    assert sum(by.values()) == sum(t.nbytes for t in ckpt.tensors.values())
    # the scale of fc belongs to the trunk, not to "extras"
    scale = ckpt.tensors["fc.weight_scale"]
    without = bytes_by_component(t for t in ckpt.tensors.values() if t.name != "fc.weight_scale")
    assert by["trunk"] - without["trunk"] == scale.nbytes
