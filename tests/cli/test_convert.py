"""`dflash2-ckpt convert`: exit codes, the JSON report, and the dry-run plan."""

from __future__ import annotations

import json
from pathlib import Path

from _kit.cli import one_json
from _kit.cli import run as cli
from _kit.convert import build, flat_config, leftovers, nested_config, p
from conftest import FIXTURES


def run(*args: str) -> tuple[int, str, str]:
    return cli("convert", *args)


def test_convert_json(tmp_path: Path) -> None:
    src = build(tmp_path / "src", flat_config(p()))
    code, out, _ = run(str(src), "-o", str(tmp_path / "out"), "--to", "nested", "--format", "json")
    assert code == 0
    doc = json.loads(out)
    assert doc["written"] and doc["from"] == "flat" and doc["to"] == "nested"
    assert doc["tensors_verified"] == doc["counts"]["copy"] + doc["counts"]["rename"]
    changed = [c for c in doc["config_changes"] if c["action"] == "changed"]
    assert changed == [
        {
            "action": "changed",
            "from": "aux_hidden_state_layer_ids",
            "to": "dflash_config.target_layer_ids",
            "value": [1, 3],
            "old": [2, 4],
            "reason": "the nested dialect counts decoder layers: target = aux - 1",
        }
    ]
    assert doc["config"]["is_causal"] is False


def test_dry_run_text_shows_diff_and_plan(tmp_path: Path) -> None:
    src = build(tmp_path / "src", nested_config(p()))
    code, out, _ = run(
        str(src),
        "-o",
        str(tmp_path / "out"),
        "--to",
        "flat",
        "--verifier-name",
        "org/target",
        "--verifier-arch",
        "Qwen3ForCausalLM",
        "--dry-run",
    )
    assert code == 0 and "dry run" in out and "aux_hidden_state_layer_ids" in out
    assert "sliding_window_non_causal" in out and "would be copied bit for bit" in out
    # a plan says what a run would do: every count is "would be", every file "would write"
    flat = " ".join(out.split())  # the report wraps its lines to the terminal's width
    assert " B would be written" in flat and "would write model.safetensors" in flat
    assert " B written" not in out and "\n  model.safetensors" not in out
    assert not (tmp_path / "out").exists() and leftovers(tmp_path) == []


def test_refusal_exits_1_with_reason(tmp_path: Path) -> None:
    cfg = nested_config(p(layer_types=["sliding_attention", "full_attention"]))
    cfg["is_causal"] = cfg["dflash_config"]["causal"] = True
    src = build(tmp_path / "src", cfg)
    code, out, err = run(
        str(src),
        "-o",
        str(tmp_path / "out"),
        "--to",
        "flat",
        "--verifier-name",
        "a/b",
        "--verifier-arch",
        "Qwen3ForCausalLM",
    )
    assert code == 1 and "refused" in err and "full_attention" in err
    code, out, _ = run(
        str(src),
        "-o",
        str(tmp_path / "out"),
        "--to",
        "flat",
        "--verifier-name",
        "a/b",
        "--verifier-arch",
        "Qwen3ForCausalLM",
        "--format",
        "json",
    )
    doc = one_json(out)
    assert code == 1 and doc["refused"] is True and "full_attention" in doc["error"]["message"]


def test_existing_destination_is_a_usage_error(tmp_path: Path) -> None:
    src = build(tmp_path / "src", flat_config(p()))
    (tmp_path / "out").mkdir()
    code, _, err = run(str(src), "-o", str(tmp_path / "out"), "--to", "nested")
    assert code == 2 and "--force" in err
    code, out, _ = run(str(src), "-o", str(tmp_path / "out"), "--to", "nested", "--format", "json")
    assert code == 2 and one_json(out)["error"]["type"] == "ConversionUsageError"
    code, _, _ = run(str(src), "-o", str(tmp_path / "out"), "--to", "nested", "--force")
    assert code == 0


def test_unreadable_source_exits_3(tmp_path: Path) -> None:
    code, _, err = run(str(tmp_path / "nope"), "-o", str(tmp_path / "out"), "--to", "nested")
    assert code == 3 and "no such file" in err
    src = build(tmp_path / "src", flat_config(p()))
    (src / "config.json").write_text("{not json")
    code, _, err = run(str(src), "-o", str(tmp_path / "out"), "--to", "nested")
    assert code == 3


def test_usage_error_exits_2(tmp_path: Path) -> None:
    code, _, _ = run(str(tmp_path), "-o", str(tmp_path / "out"), "--to", "sideways")
    assert code == 2


def test_no_verifier_name_is_a_usage_error(tmp_path: Path) -> None:
    src = build(tmp_path / "src", nested_config(p()))
    code, out, _ = run(str(src), "-o", str(tmp_path / "out"), "--to", "flat", "--format", "json")
    doc = one_json(out)
    assert code == 2 and "--verifier-name" in doc["error"]["hint"] and not (tmp_path / "out").exists()


def test_destination_inside_source_is_a_usage_error(tmp_path: Path) -> None:
    src = build(tmp_path / "src", flat_config(p()))
    code, out, err = run(str(src), "-o", str(src / "inner"), "--to", "nested")
    assert code == 2 and "overlaps" in err and not (src / "inner").exists()


def test_source_with_error_findings_is_not_converted_unless_accepted(tmp_path: Path) -> None:
    src = FIXTURES / "broken" / "mask-id-out-of-vocab"
    code, out, _ = run(
        str(src),
        "-o",
        str(tmp_path / "out"),
        "--to",
        "flat",
        "--verifier-name",
        "a/b",
        "--verifier-arch",
        "Qwen3ForCausalLM",
        "--format",
        "json",
    )
    err = one_json(out)["error"]
    codes = {f["code"] for f in err["findings"]}
    assert code == 1 and err["type"] == "SourceFindingsError" and codes and not (tmp_path / "out").exists()
    code, _, stderr = run(
        str(src),
        "-o",
        str(tmp_path / "out"),
        "--to",
        "flat",
        "--verifier-name",
        "a/b",
        "--verifier-arch",
        "Qwen3ForCausalLM",
    )
    assert code == 1 and all(c in stderr for c in codes)
    code, out, _ = run(
        str(src),
        "-o",
        str(tmp_path / "out"),
        "--to",
        "flat",
        "--verifier-name",
        "a/b",
        "--verifier-arch",
        "Qwen3ForCausalLM",
        "--accept-findings",
        ",".join(sorted(codes)),
        "--format",
        "json",
    )
    assert code == 0 and one_json(out)["written"] is True


def test_accept_findings_takes_known_codes_only(tmp_path: Path) -> None:
    src = build(tmp_path / "src", flat_config(p()))
    code, out, _ = run(
        str(src),
        "-o",
        str(tmp_path / "out"),
        "--to",
        "nested",
        "--accept-findings",
        "XX1",
        "--format",
        "json",
    )
    assert code == 2 and one_json(out)["error"]["type"] == "UsageError"
