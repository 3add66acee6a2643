"""`verify --fix / --diff / --unsafe-fixes` and `hook ... --fix` on copies of the broken fixtures."""

from __future__ import annotations

import json
import shutil
import struct
from pathlib import Path

from _kit.cli import one_json, run, run_json
from _kit.fakehub import FakeHub
from conftest import FIXTURES


def _copy(name: str, tmp_path: Path) -> Path:
    dest = tmp_path / name
    shutil.copytree(FIXTURES / "broken" / name, dest)
    return dest


def _split(path: Path) -> tuple[dict[str, object], bytes]:
    """The header JSON and the data bytes behind it."""
    raw = path.read_bytes()
    n = struct.unpack("<Q", raw[:8])[0]
    return json.loads(raw[8 : 8 + n]), raw[8 + n :]


def _codes(d: Path, *args: str) -> list[str]:
    _, out, _ = run("verify", str(d), "--format", "json", *args)
    return [f["code"] for f in one_json(out)["findings"]]


def _fixable(d: Path, code: str) -> int:
    """How many findings verify marks safely fixable, all of them `code` (the count follows the engines
    known: one per engine that reads the key differently, so tests derive it instead of listing it)."""
    _, out, _ = run("verify", str(d), "--format", "json")
    found = one_json(out)["findings"]
    fixes = [f["code"] for f in found if (f.get("fix") or {}).get("applicability") == "safe"]
    assert fixes and set(fixes) == {code}, fixes
    return len(fixes)


def test_json_findings_say_whether_they_are_fixable() -> None:
    _, out, _ = run("verify", str(FIXTURES / "broken" / "codebook-weight-suffix"), "--format", "json")
    fixes = {f["code"]: f.get("fix") for f in one_json(out)["findings"]}
    assert fixes["DF206"] == {
        "applicability": "safe",
        "description": "rename tensor candidate_selector."
        "successor_codebook.weight to candidate_selector.successor_codebook",
    }
    _, out, _ = run("verify", str(FIXTURES / "broken" / "causality-unstated"), "--format", "json", "--strict")
    [f] = one_json(out)["findings"]
    assert f["code"] == "DF403" and f["fix"]["applicability"] == "unsafe"
    _, out, _ = run("verify", str(FIXTURES / "broken" / "fc-wrong-shape"), "--format", "json")
    assert all("fix" not in f for f in one_json(out)["findings"])  # a wrong shape is no mechanical fix


def test_text_marks_fixable_findings() -> None:
    _, out, _ = run("verify", str(FIXTURES / "broken" / "codebook-weight-suffix"))
    assert "DF206 [*]" in out and "fixable with --fix" in out
    _, out, _ = run("hook", "verify", str(FIXTURES / "broken" / "causality-unstated" / "config.json"))
    assert "DF403 [~]" in out


def test_diff_shows_the_config_change_and_writes_nothing(tmp_path: Path) -> None:
    d = _copy("engines-split-causality", tmp_path)
    before = (d / "config.json").read_bytes()
    n = _fixable(d, "DF401")
    code, out, err = run("verify", str(d), "--diff")
    assert code == 1 and f"Would fix {n} finding(s)" in err
    assert "--- a/config.json" in out and '+  "is_causal": true' in out
    assert (d / "config.json").read_bytes() == before


def test_fix_writes_the_intended_causality_and_verifies_again(tmp_path: Path) -> None:
    d = _copy("engines-split-causality", tmp_path)
    assert "DF401" in _codes(d)
    _, report = run_json("verify", str(d))
    # exllamav3 does not read dflash_config.causal: it runs the full layers bidirectional
    assert "exllamav3>=1.6.5" in {f["details"]["engine"] for f in report["findings"] if f["code"] == "DF401"}
    n = _fixable(d, "DF401")
    code, out, err = run("verify", str(d), "--fix", "--strict")
    assert code == 0 and f"fixed {n} finding(s) in config.json" in err and "no findings" in out
    assert "DF401" not in _codes(d)
    cfg = json.loads((d / "config.json").read_text())
    assert cfg["is_causal"] is True and cfg["dflash_config"]["causal"] is True
    code, out, err = run("verify", str(d), "--diff")
    assert code == 0 and out == "" and "Nothing to fix" in err


def test_fix_renames_codebooks_in_the_header_only(tmp_path: Path) -> None:
    d = _copy("codebook-weight-suffix", tmp_path)
    raw = (d / "model.safetensors").read_bytes()
    header, data = _split(d / "model.safetensors")
    code, _, err = run("verify", str(d), "--fix")
    assert code == 0 and "fixed 2 finding(s) in model.safetensors" in err
    new = (d / "model.safetensors").read_bytes()
    new_header, new_data = _split(d / "model.safetensors")
    assert len(new) == len(raw) and new[:8] == raw[:8] and new_data == data
    assert (
        new_header["candidate_selector.successor_codebook"]
        == header["candidate_selector.successor_codebook.weight"]
    )
    assert "candidate_selector.successor_codebook.weight" not in new_header
    assert "DF206" not in _codes(d)
    assert not list(d.glob(".*.fix"))  # no temporary file left behind


def test_fix_strips_the_model_prefix(tmp_path: Path) -> None:
    d = _copy("tensor-model-prefix", tmp_path)
    n = _fixable(d, "DF202")
    code, out, err = run("verify", str(d), "--fix", "--strict")
    assert code == 0 and f"fixed {n} finding(s)" in err, out
    assert "DF202" not in _codes(d)
    assert all(not k.startswith("model.") for k in _split(d / "model.safetensors")[0])


def test_unsafe_fix_only_when_asked(tmp_path: Path) -> None:
    d = _copy("causality-unstated", tmp_path)
    before = (d / "config.json").read_bytes()
    code, _, err = run("verify", str(d), "--fix", "--strict")
    assert code == 1 and "Nothing to fix" in err and (d / "config.json").read_bytes() == before
    code, out, _ = run("verify", str(d), "--diff", "--unsafe-fixes")
    assert code == 1 and '+  "is_causal": false' in out
    code, _, _ = run("verify", str(d), "--fix", "--unsafe-fixes", "--strict")
    assert code == 0
    cfg = json.loads((d / "config.json").read_text())
    assert cfg["is_causal"] is False and cfg["dflash_config"]["causal"] is False


def test_select_limits_what_is_fixed(tmp_path: Path) -> None:
    d = _copy("tensor-model-prefix", tmp_path)
    code, _, err = run("verify", str(d), "--fix", "--select", "DF4")
    assert code == 0 and "Nothing to fix" in err
    assert any(k.startswith("model.") for k in _split(d / "model.safetensors")[0])


def test_fix_and_diff_together_is_a_usage_error(tmp_path: Path) -> None:
    d = _copy("engines-split-causality", tmp_path)
    code, _, err = run("verify", str(d), "--fix", "--diff")
    assert code == 2 and "choose one" in err


def test_hook_fix_repairs_each_directory(tmp_path: Path) -> None:
    a, b = _copy("engines-split-causality", tmp_path), _copy("codebook-weight-suffix", tmp_path)
    code, out, err = run(
        "hook", "verify", str(a / "config.json"), str(b / "model.safetensors"), "--fix", "--strict"
    )
    assert code == 0, out
    assert f"{a}: fixed 4" in err and f"{b}: fixed 2" in err
    code, out, _ = run("hook", "config", str(a / "config.json"), "--diff")
    assert code == 0 and out == ""


def test_fix_renames_across_shards_and_the_index(tmp_path: Path) -> None:
    from _kit.convert import build, layout_of, tensor_bytes

    cfg = json.loads((FIXTURES / "good" / "nested-v2" / "config.json").read_text())
    d = build(
        tmp_path / "sharded",
        cfg,
        shards=2,
        tensors=[("model." + name, dtype, shape) for name, dtype, shape in layout_of(cfg, "F32")],
    )
    before = tensor_bytes(d)
    code, out, err = run("verify", str(d), "--fix")
    assert code == 0, out + err
    assert "model.safetensors.index.json" in err and "model-00001-of-00002.safetensors" in err
    after = tensor_bytes(d)
    assert {k.removeprefix("model."): v for k, v in before.items()} == after
    index = json.loads((d / "model.safetensors.index.json").read_text())
    assert set(index["weight_map"]) == set(after)
    assert "DF202" not in _codes(d)


def test_a_config_with_a_repeated_key_is_not_rewritten(tmp_path: Path) -> None:
    d = _copy("engines-split-causality", tmp_path)
    text = (
        (d / "config.json")
        .read_text()
        .replace('"hidden_act": "silu",', '"hidden_act": "silu", "hidden_act": "gelu",')
    )
    (d / "config.json").write_text(text)
    _, out, _ = run("verify", str(d), "--format", "json")
    found = one_json(out)["findings"]
    assert {"DF117", "DF401"} <= {f["code"] for f in found} and all("fix" not in f for f in found)
    code, _, err = run("verify", str(d), "--fix")
    assert "Nothing to fix" in err and (d / "config.json").read_text() == text


def test_the_targets_vocab_size_is_an_unsafe_fix(tmp_path: Path) -> None:
    d = tmp_path / "assistant"
    shutil.copytree(FIXTURES / "good" / "assistant-v1", d)
    target = str(FIXTURES / "targets" / "tiny-target")
    vocab = json.loads((FIXTURES / "targets" / "tiny-target" / "config.json").read_text())["vocab_size"]
    _, out, _ = run("verify", str(d), "--target", target, "--format", "json")
    [f] = [f for f in one_json(out)["findings"] if f["code"] == "DF120"]
    assert f["fix"] == {"applicability": "unsafe", "description": f"set vocab_size: {vocab} (the target's)"}
    _, out, _ = run("verify", str(d), "--format", "json")  # without --target there is no value to write
    assert all("fix" not in f for f in one_json(out)["findings"] if f["code"] == "DF120")
    code, _, _ = run("verify", str(d), "--target", target, "--fix", "--unsafe-fixes")
    assert code == 0 and json.loads((d / "config.json").read_text())["vocab_size"] == vocab
    assert "DF120" not in _codes(d, "--target", target)


def test_a_config_with_a_byte_order_mark_is_fixed_as_verify_read_it(tmp_path: Path) -> None:
    d = _copy("engines-split-causality", tmp_path)
    n = _fixable(d, "DF401")
    (d / "config.json").write_bytes(b"\xef\xbb\xbf" + (d / "config.json").read_bytes())
    code, _, err = run("verify", str(d), "--fix", "--strict")
    assert code == 0 and f"fixed {n} finding" in err and "Traceback" not in err
    assert json.loads((d / "config.json").read_text())["is_causal"] is True


def test_a_header_string_utf8_cannot_hold_is_kept_escaped(tmp_path: Path) -> None:
    d = _copy("tensor-model-prefix", tmp_path)
    header, data = _split(d / "model.safetensors")
    text = json.dumps({"__metadata__": {"note": "\ud800 é"}, **header}).encode()  # ASCII, escapes kept
    (d / "model.safetensors").write_bytes(struct.pack("<Q", len(text)) + text + data)
    code, out, err = run("verify", str(d), "--diff")
    assert code == 1 and '+"fc.weight"' in out
    n = _fixable(d, "DF202")
    code, _, err = run("verify", str(d), "--fix")
    assert code == 0 and f"fixed {n} finding" in err
    new_header, new_data = _split(d / "model.safetensors")
    assert new_data == data and new_header["__metadata__"] == {"note": "\ud800 é"}


def test_fix_on_a_hub_repo_is_refused(hub: FakeHub, tmp_path: Path) -> None:
    hub.add_commit("org/split", _copy("engines-split-causality", tmp_path))
    code, out, err = run("verify", "org/split", "--fix")
    assert code == 2 and "download the repository and run them on the local copy" in err
