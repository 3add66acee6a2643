"""Config keys engines read beyond the core schema: MiMo's dflash_config.attention_value_scale (vLLM 0.31.0 and
SGLang 0.5.20 on scale V by it) is modelled and judged per release; the other keys a release reads are DF121
(read, not checked), never DF116's "not a key the engines read"."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from _kit.cli import run_json
from conftest import FIXTURES

GOOD = FIXTURES / "good" / "nested-v1"


def _drafter(tmp_path: Path, dflash: dict[str, Any] | None = None, top: dict[str, Any] | None = None) -> Path:
    d = tmp_path / "drafter"
    shutil.copytree(GOOD, d)
    cfg = json.loads((d / "config.json").read_text())
    cfg["dflash_config"].update(dflash or {})
    cfg.update(top or {})
    (d / "config.json").write_text(json.dumps(cfg))
    return d


def _by_field(report: dict[str, Any]) -> dict[str, str]:
    return {f["field"]: f["code"] for f in report["findings"] if f.get("field")}


def test_attention_value_scale_is_a_read_key_not_df116(tmp_path: Path) -> None:
    rc, report = run_json("verify", str(_drafter(tmp_path, {"attention_value_scale": 0.5})))
    assert rc == 0 and "dflash_config.attention_value_scale" not in _by_field(report)  # before: DF116


def test_a_non_number_value_scale_is_refused(tmp_path: Path) -> None:
    rc, report = run_json("verify", str(_drafter(tmp_path, {"attention_value_scale": True})))
    assert rc == 1 and _by_field(report)["dflash_config.attention_value_scale"] == "DF101"


def test_compat_judges_the_value_scale_per_release(tmp_path: Path) -> None:
    _, report = run_json("compat", str(_drafter(tmp_path, {"attention_value_scale": 0.5})))
    verdicts = {(e["engine"], e["versions"]): e for e in report["engines"]}

    def df815(key: tuple[str, str]) -> list[str]:
        return [r["message"] for r in verdicts[key]["reasons"] if r["code"] == "DF815"]

    assert verdicts[("vllm", ">=0.34")]["verdict"] == "loads" and not df815(("vllm", ">=0.34"))
    for old in (
        ("vllm", ">=0.26,<0.28"),
        ("vllm", "==0.28.0"),
        ("vllm", ">=0.29,<0.31"),
        ("sglang", ">=0.5.18,<0.5.19"),
        ("z-lab", ">=0.1.0"),
        ("mlx-vlm", ">=0.7.0"),
    ):
        [msg] = df815(old)
        assert "attention_value_scale" in msg and "multiplied by 0.5" in msg, msg
        assert "lacks `attention_value_scale`" in msg or "lacks `value_scale`" in msg, (
            msg
        )  # the release cited
        assert verdicts[old]["verdict"] in ("degraded", "fails")
    # SGLang's >=0.5.19 range is judged as 0.5.19, which does not read it; 0.5.20 and later do
    [msg] = df815(("sglang", ">=0.5.19"))
    assert "0.5.20 and later read it" in msg and "sglang==0.5.20..0.5.23" in msg


def test_a_value_scale_of_one_changes_nothing(tmp_path: Path) -> None:
    _, report = run_json("compat", str(_drafter(tmp_path, {"attention_value_scale": 1.0})))
    assert not [r for e in report["engines"] for r in e["reasons"] if r["code"] == "DF815"]


def test_inspect_reports_v_scale_and_sinks_per_engine(tmp_path: Path) -> None:
    _, doc = run_json("inspect", str(_drafter(tmp_path, {"attention_value_scale": 0.5})))
    views = {v["engine"]: v["defaults"] for v in doc["summary"]["engines"]}
    assert views["vllm>=0.34"]["attention_value_scale"]["engine"] == 0.5
    assert views["sglang>=0.5.19"]["attention_value_scale"] == {
        "checkpoint": 0.5,
        "engine": 1.0,
        "filled": False,
        "source": views["sglang>=0.5.19"]["attention_value_scale"]["source"],
    }
    assert "sglang==0.5.11..0.5.19" in views["sglang>=0.5.19"]["attention_value_scale"]["source"]
    assert views["z-lab>=0.1.0"]["attention_sink_bias"] == {
        "checkpoint": False,
        "engine": False,
        "filled": False,
        "source": "reads the checkpoint's value",
    }


@pytest.mark.parametrize(
    "where,key,value,reader",
    [
        ("top", "is_neox_style", False, "vLLM 0.28.0 and later, SGLang"),
        ("dflash", "use_aux_hidden_state", True, "vLLM"),
        ("top", "add_swa_attention_sink_bias", True, "vLLM"),
        ("dflash", "mask_token", "<|mask|>", "SGLang"),
        ("dflash", "num_target_layers", 4, "SGLang, mlx-vlm 0.7.0 and later"),
        ("dflash", "projector_type", "domino", "SGLang 0.5.20 and later"),
        ("top", "use_gemma_norm", False, "SGLang 0.5.23 and later"),
        ("dflash", "runtime_block_size", 4, "mlx-vlm"),
        ("top", "dflash_query_causal", True, "mlx-vlm 0.7.0 and later"),
        ("top", "final_logit_softcapping", 30.0, "mlx-vlm (DFlash v1)"),
    ],
)
def test_keys_an_engine_reads_are_df121_with_the_reader(
    tmp_path: Path, where: str, key: str, value: Any, reader: str
) -> None:
    d = _drafter(
        tmp_path, {key: value} if where == "dflash" else None, {key: value} if where == "top" else None
    )
    _, report = run_json("verify", str(d))
    path = f"dflash_config.{key}" if where == "dflash" else key
    [f] = [f for f in report["findings"] if f.get("field") == path]
    assert f["code"] == "DF121" and f["severity"] == "info"  # before: DF116 "not a key the engines read"
    assert f["details"]["readers"] == reader and "==" in f["details"]["source"]
    assert "is read by" in f["message"] and "not a key the engines read" not in f["message"]


def test_a_key_no_engine_reads_is_still_df116(tmp_path: Path) -> None:
    _, report = run_json("verify", str(_drafter(tmp_path, {"future_knob": 1}, {"my_training_run": "x"})))
    assert _by_field(report) == {"dflash_config.future_knob": "DF116", "my_training_run": "DF116"}


def test_gguf_carries_the_value_scale_both_ways(tmp_path: Path) -> None:
    from _kit.cli import invoke
    from dflash2_ckpt.formats import gguf_names as N
    from gguf import GGUFReader

    src = _drafter(tmp_path, {"attention_value_scale": 0.5})
    gguf = tmp_path / "drafter.gguf"
    r = invoke(
        "convert",
        str(src),
        "--to",
        "gguf",
        "-o",
        str(gguf),
        "--target",
        str(FIXTURES / "targets" / "tiny-target"),
    )
    assert r.exit_code == 0, r.output
    field = GGUFReader(gguf).fields[N.KEY_VALUE_SCALE]  # llama.cpp b11434 reads dflash.attention.value_scale
    assert float(field.parts[field.data[0]][0]) == 0.5  # before: not written, llama.cpp ran V unscaled
    _, report = run_json("compat", str(gguf))
    verdicts = {(e["engine"], e["versions"]): e for e in report["engines"]}
    [msg] = [x["message"] for x in verdicts[("llama.cpp", ">=b10662")]["reasons"] if x["code"] == "DF815"]
    assert "dflash.attention.value_scale" in msg and "b11434 reads it" in msg
    back = tmp_path / "back"
    assert invoke("convert", str(gguf), "--to", "nested", "-o", str(back)).exit_code == 0
    assert json.loads((back / "config.json").read_text())["dflash_config"]["attention_value_scale"] == 0.5


def test_flat_keys_vllm_builds_its_config_from_are_df121(tmp_path: Path) -> None:
    d = tmp_path / "flat"
    shutil.copytree(FIXTURES / "good" / "flat-v1", d)
    cfg = json.loads((d / "config.json").read_text())
    cfg["transformer_layer_config"]["is_neox_style"] = False  # the base of vLLM's config: read
    cfg["attention_value_scale"] = 0.5  # vLLM's flat mapping drops it: unread
    (d / "config.json").write_text(json.dumps(cfg))
    _, report = run_json("verify", str(d))
    assert _by_field(report) == {
        "transformer_layer_config.is_neox_style": "DF121",
        "attention_value_scale": "DF116",
    }
    _, compat = run_json("compat", str(d))
    [current] = [e for e in compat["engines"] if (e["engine"], e["versions"]) == ("vllm", ">=0.34")]
    assert current["verdict"] == "degraded"
    assert any("does not read attention_value_scale" in x["message"] for x in current["reasons"])


def test_inspect_reports_the_sinks_a_gguf_holds(tmp_path: Path) -> None:
    from _kit.cli import invoke

    src = _drafter(tmp_path, {"attention_sink_bias": True})
    from dflash2_ckpt.checkpoint.layout import expected_tensors
    from dflash2_ckpt.dev.synth import materialise
    from dflash2_ckpt.formats.parse import to_spec

    cfg = json.loads((src / "config.json").read_text())
    spec, _ = to_spec(cfg)
    assert spec is not None
    heads = spec.num_attention_heads
    sinks = [
        (f"layers.{i}.self_attn.attention_sink_bias", "F32", (heads,)) for i in range(spec.num_hidden_layers)
    ]
    d = materialise(
        tmp_path / "sinks", cfg, [(e.name, "F32", e.shape) for e in expected_tensors(spec)] + sinks
    )
    gguf = tmp_path / "sinks.gguf"
    r = invoke(
        "convert",
        str(d),
        "--to",
        "gguf",
        "-o",
        str(gguf),
        "--target",
        str(FIXTURES / "targets" / "tiny-target"),
    )
    assert r.exit_code == 0, r.output
    _, doc = run_json("inspect", str(gguf))
    [view] = doc["summary"]["engines"]
    assert (
        view["engine"].startswith("llama.cpp")
        and view["defaults"]["attention_sink_bias"]["checkpoint"] is True
    )
