"""DF2xx on checkpoints built from the clean nested-v2 fixture with one thing changed."""

from __future__ import annotations

from pathlib import Path

from conftest import FIXTURES
from dflash2_ckpt.checkpoint import open_checkpoint
from dflash2_ckpt.dev.synth import materialise
from dflash2_ckpt.usecases.verify import verify

GOOD = FIXTURES / "good" / "nested-v2"


def _layout() -> tuple[dict, list[tuple[str, str, tuple[int, ...]]]]:
    ckpt = open_checkpoint(GOOD)
    assert ckpt.config is not None
    return dict(ckpt.config), [(t.name, t.dtype, t.shape) for t in ckpt.tensors.values()]


def _codes(d: Path) -> dict[str, list]:
    out: dict[str, list] = {}
    for f in verify(d).findings:
        out.setdefault(f.code, []).append(f)
    return out


def test_the_base_layout_is_clean(tmp_path: Path) -> None:
    cfg, tensors = _layout()
    assert not [f for f in verify(materialise(tmp_path, cfg, tensors)).findings if f.severity != "info"]


def test_mixed_dtypes_are_df205(tmp_path: Path) -> None:
    cfg, tensors = _layout()
    tensors = [(n, "F16" if n == "norm.weight" else d, s) for n, d, s in tensors]
    found = _codes(materialise(tmp_path, cfg, tensors))
    assert set(found["DF205"][0].details["dtypes"]) == {"F32", "F16"}


def test_config_dtype_other_than_the_tensors_is_df211(tmp_path: Path) -> None:
    cfg, tensors = _layout()
    stored = {d for _, d, _ in tensors}
    assert stored == {"F32"}
    cfg["dtype"] = "bfloat16"
    cfg.pop("torch_dtype", None)
    f = _codes(materialise(tmp_path, cfg, tensors))["DF211"][0]
    assert f.details == {"config": "bfloat16", "stored": "F32"} and f.field == "dtype"


def test_encoder_names_are_df208_and_count_as_the_part(tmp_path: Path) -> None:
    cfg, tensors = _layout()
    renamed = {"fc.weight": "encoder.fc.weight", "hidden_norm.weight": "encoder.output_norm_enc.weight"}
    tensors = [(renamed.get(n, n), d, s) for n, d, s in tensors]
    found = _codes(materialise(tmp_path, cfg, tensors))
    assert sorted(f.tensor for f in found["DF208"]) == sorted(renamed.values())
    assert "DF201" not in found  # the alias fills the part it names


def test_copies_and_vocab_maps_are_reported_not_loaded(tmp_path: Path) -> None:
    cfg, tensors = _layout()
    v, h = cfg["vocab_size"], cfg["hidden_size"]
    tensors += [("verifier_lm_head.weight", "F32", (v, h)), ("d2t", "I64", (v,))]
    found = _codes(materialise(tmp_path, cfg, tensors))
    assert [f.tensor for f in found["DF207"]] == ["verifier_lm_head.weight"]
    assert [f.tensor for f in found["DF210"]] == ["d2t"]
    assert "DF202" not in found and "DF204" not in found
