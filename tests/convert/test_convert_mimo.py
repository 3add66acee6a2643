"""A MiMo-style drafter (dflash_config.use_swa / swa_window_size / attention_sink_bias) has no home in the
flat dialect: convert refuses it, and compat advises no conversion that would lose them."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from _kit.cli import invoke_cli
from conftest import FIXTURES
from dflash2_ckpt.cli import main

TARGET = FIXTURES / "targets" / "tiny-target"


def mimo(tmp_path: Path) -> Path:
    d = tmp_path / "mimo"
    shutil.copytree(FIXTURES / "good" / "nested-v1", d)
    cfg = json.loads((d / "config.json").read_text())
    cfg["dflash_config"].update(
        use_swa=True, swa_window_size=cfg.get("sliding_window") or 16, attention_sink_bias=True
    )
    (d / "config.json").write_text(json.dumps(cfg))
    return d


def test_nested_to_flat_is_refused_and_nothing_is_written(tmp_path: Path) -> None:
    d = mimo(tmp_path)
    r = invoke_cli(
        main, ["convert", str(d), "--to", "flat", "-o", str(tmp_path / "flat"), "--target", str(TARGET)]
    )
    assert r.exit_code == 1 and "attention_sink_bias" in r.output and "use_swa" in r.output
    assert not (tmp_path / "flat").exists()


def test_compat_does_not_advise_it(tmp_path: Path) -> None:
    d = mimo(tmp_path)
    doc = json.loads(invoke_cli(main, ["compat", str(d), "--format", "json"]).output)
    [spec] = [e for e in doc["engines"] if e["engine"] == "speculators"]
    assert spec["verdict"] == "fails" and spec["reasons"][0]["code"] in ("DF813", "DF814")
    assert not any(
        "--to flat" in r["message"] for e in doc["engines"] for r in e["reasons"] if r["code"] == "DF801"
    )


def test_convert_takes_a_subfolder_like_verify(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    shutil.copytree(FIXTURES / "good" / "nested-v2", repo / "dflash")
    r = invoke_cli(
        main,
        [
            "convert",
            str(repo),
            "--subfolder",
            "dflash",
            "--to",
            "flat",
            "-o",
            str(tmp_path / "flat"),
            "--target",
            str(TARGET),
        ],
    )
    assert r.exit_code == 0, r.output
    assert invoke_cli(main, ["verify", str(tmp_path / "flat")]).exit_code == 0
    r = invoke_cli(
        main, ["convert", str(repo), "--subfolder", "../x", "--to", "flat", "-o", str(tmp_path / "f2")]
    )
    assert r.exit_code == 2


def test_inspect_names_the_layer_type_it_has_instead_of_none(tmp_path: Path) -> None:
    d = mimo(tmp_path)
    cfg = json.loads((d / "config.json").read_text())
    cfg.pop("layer_types", None)
    (d / "config.json").write_text(json.dumps(cfg))
    doc = json.loads(invoke_cli(main, ["inspect", str(d), "--format", "json"]).output)
    assert all("dflash_config.use_swa" in layer["type_text"] for layer in doc["summary"]["layers"])
    r = invoke_cli(main, ["inspect", str(d)], env={"COLUMNS": "250"})
    rows = [line for line in r.output.splitlines() if line.startswith("│ 0 ") or line.startswith("│ 1 ")]
    assert rows and all("None" not in x and "not in layer_types" in x for x in rows), r.output


def test_declared_sink_tensors_are_not_unexpected(tmp_path: Path) -> None:
    from _kit.convert import layout_of
    from dflash2_ckpt.dev.synth import materialise

    cfg = json.loads((mimo(tmp_path) / "config.json").read_text())
    heads = cfg["num_attention_heads"]
    sinks = [
        (f"layers.{i}.self_attn.attention_sink_bias", "F32", (heads,))
        for i in range(cfg["num_hidden_layers"])
    ]
    d = materialise(tmp_path / "sinks", cfg, layout_of(cfg) + sinks)
    doc = json.loads(invoke_cli(main, ["verify", str(d), "--format", "json"]).output)
    assert "DF202" not in {f["code"] for f in doc["findings"]}, doc["findings"]
    # undeclared, the same tensors are reported
    cfg["dflash_config"]["attention_sink_bias"] = False
    d2 = materialise(tmp_path / "undeclared", cfg, layout_of(cfg) + sinks)
    doc = json.loads(invoke_cli(main, ["verify", str(d2), "--format", "json"]).output)
    assert "DF202" in {f["code"] for f in doc["findings"]}


def sink_drafter(tmp_path: Path, *, declared: bool = True, name: str = "sinks") -> Path:
    """The MiMo drafter with one learned sink logit per head in every layer (vLLM's parameter name)."""
    from _kit.convert import layout_of
    from dflash2_ckpt.dev.synth import materialise

    cfg = json.loads((mimo(tmp_path / name) / "config.json").read_text())
    cfg["sliding_window"] = cfg["dflash_config"]["swa_window_size"]
    cfg["dflash_config"]["attention_sink_bias"] = declared
    heads = cfg["num_attention_heads"]
    sinks = [
        (f"layers.{i}.self_attn.attention_sink_bias", "F32", (heads,))
        for i in range(cfg["num_hidden_layers"])
    ]
    return materialise(tmp_path / name / "drafter", cfg, layout_of(cfg) + sinks)


def test_to_gguf_carries_the_window_and_the_sinks_where_llama_cpp_reads_them(tmp_path: Path) -> None:
    import gguf

    d = sink_drafter(tmp_path)
    out = tmp_path / "d.gguf"
    r = invoke_cli(main, ["convert", str(d), "--to", "gguf", "-o", str(out), "--target", str(TARGET)])
    assert r.exit_code == 0, r.output
    reader = gguf.GGUFReader(out)
    # what llama.cpp b11434:conversion/qwen.py DFlashModel writes for use_swa, read by src/models/dflash.cpp
    assert reader.fields["dflash.attention.sliding_window"].contents() == 16
    assert reader.fields["dflash.attention.sliding_window_pattern"].contents() == [True, True]
    assert reader.fields["dflash.attention.causal"].contents() is False
    sinks = {
        t.name: (t.tensor_type.name, [int(x) for x in t.shape]) for t in reader.tensors if "sink" in t.name
    }
    assert sinks == {"blk.0.attn_sinks.weight": ("F32", [4]), "blk.1.attn_sinks.weight": ("F32", [4])}
    doc = json.loads(invoke_cli(main, ["verify", str(out), "--format", "json"]).output)
    assert doc["findings"] == [] and doc["passed"], doc
    # the command compat advises for llama.cpp (convert --to gguf) now gives a file it reads as trained
    doc = json.loads(
        invoke_cli(main, ["compat", str(out), "--engine", "llama.cpp@b11434", "--format", "json"]).output
    )
    assert [e["verdict"] for e in doc["engines"]] == ["loads"], doc
    # and back: the very same config and tensors
    back = tmp_path / "back"
    r = invoke_cli(main, ["convert", str(out), "--to", "nested", "-o", str(back)])
    assert r.exit_code == 0, r.output
    assert json.loads((back / "config.json").read_text()) == json.loads((d / "config.json").read_text())
    assert (back / "model.safetensors").read_bytes() == (d / "model.safetensors").read_bytes()


def test_to_gguf_refuses_sink_tensors_the_config_does_not_declare(tmp_path: Path) -> None:
    d = sink_drafter(tmp_path, declared=False)
    out = tmp_path / "d.gguf"
    r = invoke_cli(
        main,
        [
            "convert",
            str(d),
            "--to",
            "gguf",
            "-o",
            str(out),
            "--target",
            str(TARGET),
            "--accept-findings",
            "DF202",
        ],
    )
    assert r.exit_code == 1 and "attention_sink_bias" in r.output and "llama.cpp would apply them" in r.output
    assert not out.exists()


def test_to_gguf_refuses_use_swa_over_sliding_layer_types(tmp_path: Path) -> None:
    d = mimo(tmp_path)
    cfg = json.loads((d / "config.json").read_text())
    cfg["layer_types"] = ["sliding_attention", "full_attention"]
    cfg["sliding_window"] = 16
    (d / "config.json").write_text(json.dumps(cfg))
    out = tmp_path / "d.gguf"
    r = invoke_cli(
        main,
        [
            "convert",
            str(d),
            "--to",
            "gguf",
            "-o",
            str(out),
            "--target",
            str(TARGET),
            "--accept-findings",
            "DF",
        ],
    )
    assert r.exit_code == 1 and "use_swa" in r.output and "one GGUF pattern" in r.output, r.output
    assert not out.exists()


# engine -> (verdict, the keys it is said to ignore); vLLM reads both keys in every release
# (vllm 0.27.1..0.33.0:qwen3_dflash.py), SGLang reads dflash_config.attention_sink_bias from 0.5.20 and
# use_swa never, mlx-vlm reads the sinks from 0.7.0 and use_swa never, dflash-mlx and z-lab's dflash neither.
# mlx-vlm before 0.7.0 builds no sink parameter, so its strict load_weights also refuses the stored sinks
IGNORED = {
    ("vllm", ">=0.34"): ("loads", set()),
    ("vllm", ">=0.33,<0.34"): ("loads", set()),
    ("vllm", ">=0.26,<0.28"): ("loads", set()),
    ("sglang", ">=0.5.18,<0.5.19"): ("degraded", {"use_swa", "attention_sink_bias"}),
    ("sglang", ">=0.5.19"): ("degraded", {"use_swa", "attention_sink_bias"}),
    ("mlx-vlm", ">=0.6.0,<0.6.16"): ("fails", {"use_swa", "attention_sink_bias"}),
    ("mlx-vlm", ">=0.7.0"): ("degraded", {"use_swa"}),
    ("dflash-mlx", ">=0.1.0"): ("fails", {"use_swa", "attention_sink_bias"}),
    ("z-lab", ">=0.1.0"): ("degraded", {"use_swa", "attention_sink_bias"}),
}


def test_compat_never_says_loads_where_the_engine_ignores_the_window_or_the_sinks(tmp_path: Path) -> None:
    d = sink_drafter(tmp_path)
    doc = json.loads(invoke_cli(main, ["compat", str(d), "--format", "json"]).output)
    by = {(e["engine"], e["versions"]): e for e in doc["engines"]}
    for key, (verdict, keys) in IGNORED.items():
        e = by[key]
        said = {
            k
            for r in e["reasons"]
            if r["code"] == "DF815"
            for k in ("use_swa", "attention_sink_bias")
            if f"does not read dflash_config.{k}" in r["message"]
        }
        assert (e["verdict"], said) == (verdict, keys), (key, e)
        for r in e["reasons"]:
            if r["code"] == "DF815":  # each claim names the released file it rests on
                assert "==" in r["message"] and ".py" in r["message"], r
    sglang = next(
        r
        for r in by[("sglang", ">=0.5.19")]["reasons"]
        if "read dflash_config.attention_sink" in r["message"]
    )
    assert "0.5.20 and later read it" in sglang["message"]
    # without the MiMo keys the same engines load the drafter as before
    plain = json.loads(
        invoke_cli(main, ["compat", str(FIXTURES / "good" / "nested-v1"), "--format", "json"]).output
    )
    assert not any(r["code"] == "DF815" for e in plain["engines"] for r in e["reasons"])


def test_sinks_are_written_f32_whatever_the_source_dtype(tmp_path: Path) -> None:
    """ggml's soft_max with sinks asserts an F32 sink tensor: a BF16 drafter kept in BF16 still gets F32 sinks."""
    import numpy as np

    import gguf
    from _kit.convert import layout_of
    from dflash2_ckpt.dev.synth import materialise

    cfg = json.loads((sink_drafter(tmp_path) / "config.json").read_text())
    cfg["dtype"] = "bfloat16"
    heads = cfg["num_attention_heads"]
    sinks = [
        (f"layers.{i}.self_attn.attention_sink_bias", "BF16", (heads,))
        for i in range(cfg["num_hidden_layers"])
    ]
    bf16 = np.array([0.5, -1.25, 2.0, 3.0], dtype=np.float32).view(np.uint32) >> 16

    def data(name: str, nbytes: int) -> bytes:
        return bf16.astype("<u2").tobytes() if "sink" in name else bytes(nbytes)

    d = materialise(tmp_path / "bf16", cfg, layout_of(cfg, "BF16") + sinks, data=data)
    out = tmp_path / "d.gguf"
    r = invoke_cli(main, ["convert", str(d), "--to", "gguf", "-o", str(out), "--target", str(TARGET)])
    assert r.exit_code == 0, r.output
    t = {t.name: t for t in gguf.GGUFReader(out).tensors}
    assert t["blk.0.attn_q.weight"].tensor_type.name == "BF16"
    assert t["blk.0.attn_sinks.weight"].tensor_type.name == "F32"
    assert list(np.asarray(t["blk.1.attn_sinks.weight"].data)) == [0.5, -1.25, 2.0, 3.0]
