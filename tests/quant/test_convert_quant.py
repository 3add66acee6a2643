"""convert carries quantized drafters exactly: auxiliary tensors bit-exact, quantization_config at the top level
of both dialects, exact ignore entries following renamed modules."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import FIXTURES
from dflash2_ckpt.checkpoint import open_checkpoint
from dflash2_ckpt.checkpoint.quant import quantized_modules
from dflash2_ckpt.convert import convert
from dflash2_ckpt.dev.synth import materialise
from dflash2_ckpt.errors import ConversionError

Q = FIXTURES / "quantized"
TARGET = FIXTURES / "targets" / "tiny-target"


@pytest.mark.parametrize("scheme", ["w4a16", "w8a16", "fp8", "nvfp4"])
def test_nested_flat_nested_round_trip_is_byte_identical(tmp_path: Path, scheme: str) -> None:
    flat, back = tmp_path / "flat", tmp_path / "back"
    convert(Q / scheme, flat, to="flat", target=TARGET)
    cfg = json.loads((flat / "config.json").read_text())
    src_q = json.loads((Q / scheme / "config.json").read_text())["quantization_config"]
    assert cfg["quantization_config"] == src_q  # where from_pretrained reads it
    assert "quantization_config" not in cfg["transformer_layer_config"]
    assert quantized_modules(open_checkpoint(flat)) == quantized_modules(open_checkpoint(Q / scheme))
    convert(flat, back, to="nested", target=TARGET)
    assert (back / "model.safetensors").read_bytes() == (Q / scheme / "model.safetensors").read_bytes()
    # the one key added: the target tokenizer's fingerprint, which converting with --target records
    from dflash2_ckpt.checkpoint.tokenizer import TOKENIZER_KEY, tokenizer_fingerprint

    want = {
        **json.loads((Q / scheme / "config.json").read_text()),
        TOKENIZER_KEY: tokenizer_fingerprint(TARGET),
    }
    assert json.loads((back / "config.json").read_text()) == want


def _prefixed(tmp: Path, ignore: list[str]) -> Path:
    """The W4A16 fixture with every tensor under `model.` and the given ignore list."""
    from dflash2_ckpt.sources.local import LocalSource

    ckpt = open_checkpoint(Q / "w4a16")
    src = LocalSource(Q / "w4a16")
    cfg = json.loads((Q / "w4a16" / "config.json").read_text())
    cfg["quantization_config"]["ignore"] = ignore
    tensors = [("model." + t.name, t.dtype, t.shape) for t in ckpt.tensors.values()]
    data = {("model." + t.name): src.read_range(t.file, t.begin, t.nbytes) for t in ckpt.tensors.values()}
    return materialise(tmp / "prefixed", cfg, tensors, data=lambda n, _: data[n])


def test_exact_ignore_entries_follow_the_model_prefix_drop(tmp_path: Path) -> None:
    conv = [f"model.layers.{i}.{m}.kernel_projection" for i in (0, 1) for m in ("attention_conv", "mlp_conv")]
    src = _prefixed(tmp_path, conv + ["model.candidate_selector.hidden_projection"])
    report = convert(src, tmp_path / "flat", to="flat", target=TARGET)
    q = json.loads((tmp_path / "flat" / "config.json").read_text())["quantization_config"]
    assert q["ignore"] == [c[len("model.") :] for c in conv] + ["candidate_selector.hidden_projection"]
    assert any(c.dst == "quantization_config.ignore" for c in report.config_changes)


def test_a_regex_that_names_the_old_path_is_refused(tmp_path: Path) -> None:
    src = _prefixed(
        tmp_path, ["re:model\\.layers\\.\\d+\\..*kernel_projection$", "re:.*candidate_selector.*"]
    )
    with pytest.raises(ConversionError, match="another scheme"):
        convert(src, tmp_path / "flat", to="flat", target=TARGET)
    assert not (tmp_path / "flat").exists()


def test_modelopt_hf_quant_config_travels_with_the_checkpoint(tmp_path: Path) -> None:
    """A ModelOpt NVFP4 export keeps its scheme in hf_quant_config.json: convert copies the file verbatim."""
    base = json.loads((FIXTURES / "good" / "nested-v2" / "config.json").read_text())
    dense = open_checkpoint(FIXTURES / "good" / "nested-v2").tensors.values()
    tensors = []
    for t in dense:
        mod = t.name[: -len(".weight")]
        if (
            len(t.shape) == 2
            and t.name.endswith(".weight")
            and "kernel_projection" not in t.name
            and "candidate_selector" not in t.name
        ):
            out, inn = t.shape
            tensors += [
                (t.name, "U8", (out, inn // 2)),
                (f"{mod}.weight_scale", "F8_E4M3", (out, inn // 16)),
                (f"{mod}.weight_scale_2", "F32", ()),
                (f"{mod}.input_scale", "F32", ()),
            ]
        else:
            tensors.append((t.name, t.dtype, t.shape))
    src = materialise(tmp_path / "mo", base, tensors)
    hf = {
        "quantization": {
            "quant_algo": "NVFP4",
            "group_size": 16,
            "exclude_modules": ["*kernel_projection", "candidate_selector*"],
        }
    }
    (src / "hf_quant_config.json").write_text(json.dumps(hf))
    convert(src, tmp_path / "flat", to="flat", target=TARGET)
    assert json.loads((tmp_path / "flat" / "hf_quant_config.json").read_text()) == hf
    mods = quantized_modules(open_checkpoint(tmp_path / "flat"))
    assert mods == quantized_modules(open_checkpoint(src)) and set(mods.values()) == {"nvfp4"}
