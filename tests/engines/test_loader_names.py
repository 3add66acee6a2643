"""Stored tensor names an engine release's loader refuses, per engine and per class of name: compat says
`fails` (DF805) and quotes the released exception, and keeps `loads` where the released code handles the name.

Read in the wheels (dflash2_ckpt/engines/released.py cites the anchors, test_released.py checks them):
- vLLM 0.27.1-0.33.0 qwen3_dflash.py load_weights prepends `model.` to every name but lm_head / d2t, so a name
  stored with a `model.` prefix reaches the DFlash module as model.model.* and AutoWeightsLoader raises
  "There is no module or parameter named 'model' ..."; SGLang's load_weights and mlx-vlm's sanitize strip it.
- mlx-vlm (every release) and dflash-mlx load with mlx's strict load_weights: "Received N parameters not in
  model: ..." for a target copy (they own no embedding or head; mlx-vlm's DFlash v1 sanitize builds an
  embedding for a shipped embed_tokens.weight from 0.7.0), a vocabulary map, an attention bias (mlx-vlm's
  projections have none) or an unknown name; dflash-mlx keeps a `model.` prefix as stored.
- the z-lab reference loads through transformers' from_pretrained, which logs such names as UNEXPECTED.
The expectations are written from that code, not from compat's output.
"""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path
from typing import Any

import pytest

from _kit.cli import invoke_cli
from _kit.convert import build, layout_of
from conftest import FIXTURES
from dflash2_ckpt.cli import main

VLLM_RAISES = "There is no module or parameter named 'model'"
MLX_RAISES = "parameters not in model"
TARGET = FIXTURES / "targets" / "tiny-target"
Tensor = tuple[str, str, tuple[int, ...]]


def _config(good: str) -> dict[str, Any]:
    return json.loads((FIXTURES / "good" / good / "config.json").read_text())


def drafter(
    tmp: Path,
    good: str,
    *,
    prefix: bool = False,
    extra: tuple[Tensor, ...] = (),
    edit: dict[str, Any] | None = None,
) -> Path:
    """The good fixture's config and exact layout, every drafter tensor `model.`-prefixed if asked, plus extras."""
    cfg = _config(good)
    cfg.update(edit or {})
    tensors = [(("model." + n) if prefix else n, d, s) for n, d, s in layout_of(cfg)] + list(extra)
    return build(tmp / good, cfg, tensors=tensors)


def compat(path: Path, *engines: str) -> tuple[int, dict[str, dict[str, Any]]]:
    args = ["compat", str(path), *[a for e in engines for a in ("--engine", e)], "--format", "json"]
    r = invoke_cli(main, args)
    doc = json.loads(r.stdout)
    return r.exit_code, {f"{e['engine']}{e['versions']}": e for e in doc["engines"]}


def advised(msg: str) -> str:
    [command] = re.findall(r"`(dflash2-ckpt convert [^`]*)`", msg)
    return command


def refused(e: dict[str, Any]) -> list[str]:
    return [r["message"] for r in e["reasons"] if r["severity"] == "error" and r["code"] == "DF805"]


H, V = _config("nested-v2")["hidden_size"], _config("nested-v2")["vocab_size"]
EMBED: Tensor = ("embed_tokens.weight", "F32", (V, H))
HEAD: Tensor = ("lm_head.weight", "F32", (V, H))
D2T: Tensor = ("d2t", "I64", (V,))


# ------------------------------------------------------------------ the model. prefix


@pytest.mark.parametrize("good", ["nested-v2", "nested-v1", "flat-v2"])
def test_vllm_refuses_model_prefixed_names_and_advises_the_conversion_that_writes_them_bare(
    tmp_path: Path, good: str
) -> None:
    path = drafter(tmp_path, good, prefix=True)
    rc, by = compat(path, "vllm@0.29.0", "vllm@0.34.0")
    assert rc == 1
    for key in ("vllm>=0.29,<0.31", "vllm>=0.34"):
        e = by[key]
        assert e["verdict"] == "fails" and e["serve"] is None, e
        [msg] = refused(e)
        assert VLLM_RAISES in msg and "ValueError" in msg
        assert "model.fc.weight" in msg or "model.candidate_selector" in msg
        assert 'vllm/model_executor/models/qwen3_dflash.py has `elif "lm_head" not in name:`' in msg
        to = "flat" if good.startswith("nested") else "nested"
        assert f"dflash2-ckpt convert {path} --to {to}" in msg, msg


def test_the_advised_conversion_writes_the_names_bare_and_vllm_then_loads(tmp_path: Path) -> None:
    path = drafter(tmp_path, "nested-v2", prefix=True)
    _, by = compat(path, "vllm")
    [msg] = refused(by["vllm>=0.34"])
    argv = shlex.split(advised(msg))
    assert argv[:2] == ["dflash2-ckpt", "convert"], msg
    argv[argv.index("-o") + 1] = str(tmp_path / "out")
    argv[argv.index("--target") + 1] = str(TARGET)
    assert invoke_cli(main, argv[1:]).exit_code == 0
    rc, after = compat(tmp_path / "out", "vllm@0.29.0", "vllm")
    assert rc == 0 and {e["verdict"] for e in after.values()} == {"loads"}


def test_vllm_0_28_gets_no_conversion_advice_it_cannot_use(tmp_path: Path) -> None:
    # 0.28.0 fails on every DFlash2 drafter: converting fixes the names, not the release
    path = drafter(tmp_path, "nested-v2", prefix=True)
    _, by = compat(path, "vllm@0.28.0")
    [msg] = refused(by["vllm==0.28.0"])
    assert VLLM_RAISES in msg and "dflash2-ckpt convert" not in msg and "it then reports DF802" in msg


def test_vllm_before_0_28_refuses_a_prefixed_v1_drafter(tmp_path: Path) -> None:
    path = drafter(tmp_path, "nested-v1", prefix=True)
    rc, by = compat(path, "vllm@0.27.1")
    assert rc == 1 and by["vllm>=0.26,<0.28"]["verdict"] == "fails"
    assert VLLM_RAISES in refused(by["vllm>=0.26,<0.28"])[0]


def test_sglang_mlx_vlm_and_the_reference_strip_the_prefix(tmp_path: Path) -> None:
    path = drafter(tmp_path, "nested-v2", prefix=True)
    rc, by = compat(path, "sglang", "mlx-vlm@0.6.16", "mlx-vlm", "z-lab")
    assert rc == 0
    for e in by.values():
        assert e["verdict"] == "loads" and not refused(e), e


def test_a_prefixed_name_of_no_drafter_part_is_unexpected_for_every_engine(tmp_path: Path) -> None:
    # model.layers.9.* in a 2-layer drafter: stripping the prefix does not make it load, so verify calls it
    # unexpected (no rename offered), mlx-vlm's strict load refuses it, and vLLM says so once
    stray = "model.layers.9.mlp.up_proj.weight"
    path = drafter(tmp_path, "nested-v2", extra=((stray, "F32", (8, 8)),))
    r = invoke_cli(main, ["verify", str(path), "--format", "json"])
    [f] = [f for f in json.loads(r.stdout)["findings"] if f.get("tensor") == stray]
    assert f["code"] == "DF202" and "rename_to" not in (f.get("details") or {}), f
    assert "with or without its prefix" in f["message"]
    rc, by = compat(path, "vllm", "mlx-vlm")
    assert rc != 0
    for e in by.values():
        [msg] = refused(e)
        assert stray in msg, e


def test_dflash_mlx_keeps_the_prefix_and_refuses_it(tmp_path: Path) -> None:
    path = drafter(tmp_path, "nested-v1", prefix=True)
    rc, by = compat(path, "dflash-mlx")
    assert rc == 1
    [msg] = refused(by["dflash-mlx>=0.1.0"])
    assert MLX_RAISES in msg and "model.fc.weight" in msg and "a model. prefix it keeps" in msg


def test_the_assistant_names_vllm_maps_itself_still_load(tmp_path: Path) -> None:
    rc, by = compat(FIXTURES / "good" / "assistant-v1", "vllm@0.29.0", "vllm")
    assert rc == 0 and {e["verdict"] for e in by.values()} == {"loads"}


# ------------------------------------------------------------------ strict MLX loading


@pytest.mark.parametrize(
    "extra,why",
    [
        (HEAD, "a copy of the target's table"),
        (D2T, "a vocabulary map"),
        (("layers.0.self_attn.rotary_emb.inv_freq", "F32", (4,)), "not part of the drafter"),
    ],
)
def test_mlx_vlm_refuses_what_its_drafters_have_no_parameter_for(
    tmp_path: Path, extra: Tensor, why: str
) -> None:
    for good, engines in (
        ("nested-v2", ("mlx-vlm@0.6.16", "mlx-vlm")),
        ("nested-v1", ("mlx-vlm@0.6.0", "mlx-vlm@0.6.16", "mlx-vlm")),
    ):
        path = drafter(tmp_path / good, good, extra=(extra,))
        rc, by = compat(path, *engines)
        assert rc == 1, good
        for e in by.values():
            assert e["verdict"] == "fails", (good, e)
            [msg] = refused(e)
            assert extra[0] in msg and why in msg and MLX_RAISES in msg, msg
            assert "mlx==0.32.4:mlx/nn/layers/base.py" in msg and "strict=strict" in msg


def test_a_shipped_embedding_loads_into_mlx_vlm_0_7_dflash_v1_only(tmp_path: Path) -> None:
    v1 = drafter(tmp_path / "v1", "nested-v1", extra=(EMBED,))
    _, by = compat(v1, "mlx-vlm@0.6.0", "mlx-vlm@0.6.16", "mlx-vlm")
    assert by["mlx-vlm>=0.7.0"]["verdict"] != "fails" and not refused(by["mlx-vlm>=0.7.0"])
    for key in ("mlx-vlm>=0.6.0,<0.6.16", "mlx-vlm>=0.6.16,<0.7.0"):
        assert by[key]["verdict"] == "fails" and "embed_tokens.weight" in refused(by[key])[0]
    v2 = drafter(tmp_path / "v2", "nested-v2", extra=(EMBED,))
    _, by = compat(v2, "mlx-vlm@0.6.16", "mlx-vlm")
    for e in by.values():
        assert e["verdict"] == "fails" and "embed_tokens.weight" in refused(e)[0]


def test_mlx_vlm_has_no_attention_bias(tmp_path: Path) -> None:
    # attention_bias: true makes the biases part of the drafter (verify expects them); mlx-vlm builds none
    path = drafter(tmp_path, "nested-v1", edit={"attention_bias": True})
    assert any(
        n.endswith("q_proj.bias") for n, _, _ in layout_of({**_config("nested-v1"), "attention_bias": True})
    )
    rc, by = compat(path, "mlx-vlm", "dflash-mlx", "vllm")
    assert by["mlx-vlm>=0.7.0"]["verdict"] == "fails"
    assert "an attention bias" in refused(by["mlx-vlm>=0.7.0"])[0]
    assert not refused(by["dflash-mlx>=0.1.0"]) and not refused(by["vllm>=0.34"])  # both build the bias


@pytest.mark.parametrize("extra", [EMBED, HEAD, D2T])
def test_dflash_mlx_refuses_target_copies_and_maps(tmp_path: Path, extra: Tensor) -> None:
    path = drafter(tmp_path, "nested-v1", extra=(extra,))
    rc, by = compat(path, "dflash-mlx")
    assert rc == 1
    [msg] = refused(by["dflash-mlx>=0.1.0"])
    assert extra[0] in msg and MLX_RAISES in msg and "mlx-lm==0.31.0:mlx_lm/utils.py" in msg


def test_the_reference_skips_what_it_has_no_parameter_for(tmp_path: Path) -> None:
    path = drafter(
        tmp_path, "nested-v2", extra=(EMBED, HEAD, D2T, ("extra_projection.weight", "F32", (4, 4)))
    )
    rc, by = compat(path, "z-lab")
    assert rc == 0 and by["z-lab>=0.1.0"]["verdict"] == "loads"


def _sinks(good: str, name: str) -> tuple[Tensor, ...]:
    cfg = _config(good)
    return tuple(
        (f"layers.{i}.self_attn.{name}", "F32", (cfg["num_attention_heads"],))
        for i in range(cfg["num_hidden_layers"])
    )


def test_mlx_vlm_builds_sink_parameters_from_0_7_for_what_its_config_reads(tmp_path: Path) -> None:
    sink = {"dflash_config": {**_config("nested-v1")["dflash_config"], "attention_sink_bias": True}}
    v1 = drafter(tmp_path / "a", "nested-v1", extra=_sinks("nested-v1", "attention_sink_bias"), edit=sink)
    _, by = compat(v1, "mlx-vlm@0.6.16", "mlx-vlm")
    assert not refused(by["mlx-vlm>=0.7.0"])  # DFlashAttention.attention_sink_bias, (n_heads,)
    assert "an attention sink" in refused(by["mlx-vlm>=0.6.16,<0.7.0"])[0]
    named = drafter(tmp_path / "b", "nested-v1", extra=_sinks("nested-v1", "sinks"), edit=sink)
    _, by = compat(named, "mlx-vlm")
    assert "layers.0.self_attn.sinks" in refused(by["mlx-vlm>=0.7.0"])[0]
    # the DFlash2 config reads attention_sink_bias from the top level only
    v2_sink = {"dflash_config": {**_config("nested-v2")["dflash_config"], "attention_sink_bias": True}}
    v2 = drafter(tmp_path / "c", "nested-v2", extra=_sinks("nested-v2", "attention_sink_bias"), edit=v2_sink)
    _, by = compat(v2, "mlx-vlm")
    assert "an attention sink" in refused(by["mlx-vlm>=0.7.0"])[0]
