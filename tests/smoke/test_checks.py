"""The DF7xx check functions on hand-made outputs."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("triton")

from safetensors.torch import save_file  # noqa: E402

from dflash2_ckpt.codes import REGISTRY  # noqa: E402
from dflash2_ckpt.smoke import checks  # noqa: E402
from dflash2_ckpt.smoke.runner import smoke  # noqa: E402

from ._smoke_tiny import tiny_embed, tiny_params, tiny_spec, write  # noqa: E402


def test_codes_are_registered():
    for n in range(701, 714):
        assert f"DF{n}" in REGISTRY
    assert REGISTRY["DF705"].severity == REGISTRY["DF706"].severity == "warning"
    assert REGISTRY["DF711"].severity == "info" and REGISTRY["DF708"].severity == "error"


def test_nonfinite_names_the_first_bad_stage():
    ok, bad = torch.ones(3), torch.tensor([1.0, float("inf")])
    f = checks.nonfinite({"context": ok, "layer0": bad, "layer1": torch.tensor([float("nan")])})
    assert [x.code for x in f] == ["DF703"] and f[0].details["stage"] == "layer0"
    assert checks.nonfinite({"a": ok}) == []


def test_in_vocab_and_q():
    assert checks.in_vocab("p", torch.tensor([0, 9]), 10) == []
    assert [x.code for x in checks.in_vocab("p", torch.tensor([-1, 10]), 10)] == ["DF704"]
    assert checks.q_normalised(torch.full((2, 4), 0.25)) == []
    assert [x.code for x in checks.q_normalised(torch.full((2, 4), 0.3))] == ["DF709"]


def test_kernel_and_walk_match_tolerances():
    a = torch.randn(4, 5)
    assert checks.kernel_match("x", a, a + 1e-7) == []
    assert [x.code for x in checks.kernel_match("x", a, a + 1.0)] == ["DF708"]
    t1, t2 = torch.tensor([[1, 2]]), torch.tensor([[1, 3]])
    assert checks.walk_match("w", t1, t1, None, 1.0) == []
    assert checks.walk_match("w", t1, t2, (0, 1, 1e-9), 5.0) == []  # a rounding tie
    assert [x.code for x in checks.walk_match("w", t1, t2, (0, 1, 0.5), 5.0)] == ["DF708"]
    assert [x.code for x in checks.deterministic("w", t1, t2)] == ["DF710"]


def test_inert_only_when_the_weights_say_so():
    assert checks.inert_conv("m", False, 0.0, 0.0) == []  # no change measured, but not identity weights
    f = checks.inert_conv("m", True, 0.0, 0.0)
    assert f[0].code == "DF705" and "identity init" in f[0].message
    assert checks.inert_selector(None) == []
    assert checks.inert_selector("its hidden projection is zero")[0].code == "DF706"
    assert checks.identity_equivalence(1e-7) == [] and checks.identity_equivalence(0.1)[0].code == "DF707"


def test_anchor_outside_vocab_stops_the_draft(tmp_path):
    spec = tiny_spec("v2")
    hs = tmp_path / "hs.safetensors"
    save_file(
        {"hidden_states": torch.randn(4, spec.fc_in_features), "anchor_ids": torch.tensor([spec.vocab_size])},
        str(hs),
    )
    r = smoke(
        spec, write(tmp_path / "ck", {**tiny_params(spec), **tiny_embed(spec)}), label="x", hidden_states=hs
    )
    assert [f.code for f in r.findings] == ["DF704"] and r.paths == []
