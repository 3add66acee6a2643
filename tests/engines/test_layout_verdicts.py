"""The layouts users shipped, each rebuilt from the public configs' key names and driven through the CLI
(text and json): compat --target with the pairing checks, the draft-position layout, architecture names,
speculative_tokens, the mask_embedding.pt sidecar, GGUF sliding-window keys, GGUF by format first, DSpark."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from _kit.cli import invoke
from _kit.engines import real_checkpoint
from conftest import FIXTURES

TINY_TARGET = FIXTURES / "targets" / "tiny-target"


def drafter(tmp: Path, base: str, edit: Any = None, name: str = "drafter") -> Path:
    """A copy of fixtures/good/BASE with its config.json edited by `edit(config)`."""
    d = tmp / name
    shutil.copytree(FIXTURES / "good" / base, d)
    cfg = json.loads((d / "config.json").read_text())
    if edit is not None:
        edit(cfg)
    (d / "config.json").write_text(json.dumps(cfg, indent=2))
    return d


def target(tmp: Path, **over: Any) -> Path:
    t = tmp / "target"
    t.mkdir()
    cfg = json.loads((TINY_TARGET / "config.json").read_text())
    cfg.update(over)
    (t / "config.json").write_text(json.dumps(cfg))
    return t


def as_json(*args: str) -> tuple[int, dict[str, Any]]:
    r = invoke(*args, "--format", "json")
    return r.exit_code, json.loads(r.stdout)


def findings(doc: dict[str, Any], code: str) -> list[dict[str, Any]]:
    return [f for f in doc["findings"] if f["code"] == code]


def rows(doc: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {f"{e['engine']}{e['versions']}": e for e in doc["engines"]}


def codes(row: dict[str, Any]) -> list[str]:
    return [r["code"] for r in row["reasons"]]


def says(row: dict[str, Any], code: str) -> bool:
    """The verdict's reasons name `code`: its own finding, or DF813 quoting the verify finding."""
    return code in codes(row) or any(code in r["message"] for r in row["reasons"] if r["code"] == "DF813")


def flat_text(output: str) -> str:
    return " ".join(output.replace("│", " ").split())


# --- compat --target runs the pairing checks (vllm-project/vllm#48113, #46435) --------------------------


def _taps_past_the_target(cfg: dict[str, Any]) -> None:
    # trained against a 36-layer model, served on a 32-layer one: tap 33 does not exist there
    cfg["dflash_config"]["target_layer_ids"] = [1, 33]
    cfg["num_target_layers"] = 36


def test_compat_target_refuses_taps_past_the_target_like_verify(tmp_path: Path) -> None:
    d = drafter(tmp_path, "nested-v1", _taps_past_the_target)
    t = target(tmp_path, num_hidden_layers=32)
    rc, doc = as_json("verify", str(d), "--target", str(t))
    assert rc == 1 and {f["code"] for f in doc["findings"] if f["severity"] == "error"} == {"DF503", "DF504"}
    rc, doc = as_json("compat", str(d), "--target", str(t))
    assert rc == 1
    for e in doc["engines"]:
        assert e["verdict"] != "loads" and e["serve"] is None, e
    vllm = rows(doc)["vllm>=0.34"]
    assert vllm["verdict"] == "fails" and "DF503" in vllm["reasons"][0]["message"]
    r = invoke("compat", str(d), "--target", str(t), "--engine", "vllm")
    assert r.exit_code == 1 and "vllm serve" not in r.output and "DF504" in r.output
    # without --target nothing is paired: the same drafter loads (the pairing is what decides)
    assert rows(as_json("compat", str(d), "--engine", "vllm")[1])["vllm>=0.34"]["verdict"] == "loads"


def test_compat_target_refuses_a_padded_target_vocabulary(tmp_path: Path) -> None:
    d = drafter(tmp_path, "nested-v2")
    t = target(tmp_path, vocab_size=128)  # the target pads its vocabulary, the drafter does not
    rc, doc = as_json("verify", str(d), "--target", str(t))
    assert [f["code"] for f in doc["findings"] if f["severity"] == "error"] == ["DF501"]
    rc, doc = as_json("compat", str(d), "--target", str(t), "--engine", "vllm", "--engine", "sglang")
    assert rc == 1
    assert {e["verdict"] for e in doc["engines"]} == {"fails"}
    assert all("DF501" in e["reasons"][0]["message"] for e in doc["engines"])


def test_an_unreadable_hub_target_says_the_pairing_did_not_run(tmp_path: Path) -> None:
    d = drafter(tmp_path, "nested-v2")
    rc, doc = as_json("compat", str(d), "--target", str(tmp_path / "no-such-target"), "--engine", "vllm")
    [row] = doc["engines"]
    assert row["verdict"] == "loads" and "DF851" in codes(row)


# --- verify's errors and compat's verdicts agree, over every fixture and target pair ---------------------


def _drafters() -> list[Path]:
    manifest = json.loads((FIXTURES / "broken" / "MANIFEST.json").read_text())
    broken = [FIXTURES / "broken" / n for n, m in sorted(manifest.items()) if "reference" not in m]
    return (
        sorted((FIXTURES / "good").iterdir())
        + broken
        + sorted((FIXTURES / "gguf").glob("*.gguf"))
        + [FIXTURES / "pairs" / "tiny" / "drafter", FIXTURES / "pairs" / "tiny" / "drafter-v1"]
    )


TARGETS = [TINY_TARGET, FIXTURES / "pairs" / "tiny" / "target"]


@pytest.mark.parametrize("target_dir", TARGETS, ids=lambda p: p.parent.name + "/" + p.name)
def test_verify_errors_and_compat_verdicts_agree_on_every_fixture(target_dir: Path) -> None:
    for path in _drafters():
        where = f"{path.relative_to(FIXTURES)} with {target_dir.relative_to(FIXTURES)}"
        rc_v, v = as_json("verify", str(path), "--target", str(target_dir))
        if rc_v == 3:
            continue  # unreadable: compat cannot run either
        rc_c, c = as_json("compat", str(path), "--target", str(target_dir))
        errors = [f for f in v["findings"] if f["severity"] == "error" and f["code"] != "DF508"]
        for e in c["engines"]:
            sep = "" if e["versions"][0] in "<>=" else "@"
            pid = f"{e['engine']}{sep}{e['versions']}"
            hit = [f for f in errors if pid in f["details"].get("engines", [pid])]
            gguf_only = (
                path.suffix == ".gguf"
                and e["engine"] != "llama.cpp"
                and all(f["code"].startswith("DF9") for f in hit)
            )
            if hit and not gguf_only:
                assert e["verdict"] not in ("loads", "degraded"), (
                    f"{where}: {pid} {e['verdict']} despite {[f['code'] for f in hit]}"
                )
            if "DF813" in codes(e):  # compat names only errors verify reported
                named = e["reasons"][0]["message"].split("verify reports ")[1].split(" (")[0].split(", ")
                assert set(named) <= {f["code"] for f in hit}, f"{where}: {pid} {named}"
        if not errors:
            assert not any("DF813" in codes(e) for e in c["engines"]), where


def test_verify_engine_lines_are_compat_rows(tmp_path: Path) -> None:
    """verify --engine prints each named engine's verdict from the function compat's rows come from."""
    taps = drafter(tmp_path, "nested-v1", _taps_past_the_target, "taps")
    cases = [
        (taps, target(tmp_path, num_hidden_layers=32)),
        (drafter(tmp_path, "nested-v1", _anchor_first, "anchor"), TINY_TARGET),
        (FIXTURES / "good" / "nested-v2", TINY_TARGET),
        (FIXTURES / "good" / "flat-v2", TINY_TARGET),
    ]
    engines = ["--engine", "vllm@0.29.0", "--engine", "sglang", "--engine", "z-lab", "--engine", "mlx-vlm"]
    for d, t in cases:
        _, v = as_json("verify", str(d), "--target", str(t), *engines)
        _, c = as_json("compat", str(d), "--target", str(t), *engines)
        checked = [e for e in c["engines"] if e["verdict"] != "needs-conversion" and "DF814" not in codes(e)]
        lines = {(e["engine"], e["versions"]): (e["verdict"], codes(e)) for e in v["verdicts"]}
        assert checked, d
        assert all(lines[(e["engine"], e["versions"])] == (e["verdict"], codes(e)) for e in checked), d
    text = invoke("verify", str(cases[0][0]), "--target", str(cases[0][1]), "--engine", "vllm").output
    assert "vllm >=0.34: fails (DF813" in text


# --- the draft-position layout (sgl-project/sglang#40144) ---------------------------------------------


def _anchor_first(cfg: dict[str, Any]) -> None:
    cfg["dflash_config"]["sample_from_anchor"] = True


def test_a_v1_anchor_first_drafter_is_shifted_in_sglang_and_refused_by_vllm(tmp_path: Path) -> None:
    d = drafter(tmp_path, "nested-v1", _anchor_first)
    rc, doc = as_json("verify", str(d))
    assert rc == 1
    by_engine = {f["details"]["engines"][0]: f for f in findings(doc, "DF161")}
    # llama.cpp reads GGUF: its DFlash path reads the mask slots, so the converted drafter is shifted too;
    # mlx-vlm scores the mask slots only
    assert set(by_engine) == {"sglang>=0.5.19", "vllm>=0.34", "llama.cpp>=b10662", "mlx-vlm>=0.7.0"}
    assert "shifted by one" in by_engine["sglang>=0.5.19"]["message"]
    assert "sglang==0.5.18..0.5.23" in by_engine["sglang>=0.5.19"]["message"]
    assert "refuses an anchor-first drafter" in by_engine["vllm>=0.34"]["message"]
    rc, doc = as_json(
        "compat", str(d), "--engine", "sglang@0.5.18", "--engine", "vllm@0.29.0", "--engine", "z-lab"
    )
    r = rows(doc)
    assert r["sglang>=0.5.18,<0.5.19"]["verdict"] == "fails" and says(r["sglang>=0.5.18,<0.5.19"], "DF161")
    assert r["vllm>=0.29,<0.31"]["verdict"] == "fails" and says(r["vllm>=0.29,<0.31"], "DF161")
    assert r["z-lab>=0.1.0"]["verdict"] == "loads"  # the reference reads the key (no rule against it)
    # judged without --engine, an older release's verdict comes from its own rule, not from verify's lines
    every = rows(as_json("compat", str(d))[1])
    assert (every["sglang>=0.5.18,<0.5.19"]["verdict"], codes(every["sglang>=0.5.18,<0.5.19"])) == (
        "fails",
        ["DF161"],
    )
    text = flat_text(invoke("verify", str(d)).output)
    assert "DF161" in text and "τ 1.06" in text


def test_a_top_level_anchor_key_in_a_nested_config_is_not_read_by_vllm(tmp_path: Path) -> None:
    d = drafter(tmp_path, "nested-v1", lambda c: c.update(sample_from_anchor=True))
    rc, doc = as_json("compat", str(d), "--engine", "vllm")
    [row] = doc["engines"]
    assert row["verdict"] == "fails" and "drafts fill-in" in row["reasons"][0]["message"]


def test_the_mlx_logits_start_key_counts_as_anchor_first(tmp_path: Path) -> None:
    d = drafter(tmp_path, "nested-v2", lambda c: c.update(logits_start=0))
    rc, doc = as_json("verify", str(d), "--engine", "sglang")
    [f] = findings(doc, "DF161")
    assert f["field"] == "logits_start" and f["details"]["engines"] == ["sglang>=0.5.19"]


def test_inspect_does_not_claim_sglang_reads_sample_from_anchor(tmp_path: Path) -> None:
    d = drafter(tmp_path, "nested-v1", _anchor_first)
    rc, doc = as_json("inspect", str(d))
    views = {v["engine"]: v["defaults"]["sample_from_anchor"] for v in doc["summary"]["engines"]}
    sg = views["sglang>=0.5.19"]
    assert sg["checkpoint"] is True and sg["engine"] is False and sg["source"].startswith("not read")
    assert "reads the checkpoint's value" not in sg["source"]


# --- architecture names against each registry (NVIDIA-NeMo/Automodel#2913) ------------------------------


def test_an_unregistered_architecture_is_an_error_naming_the_registered_one(tmp_path: Path) -> None:
    d = drafter(tmp_path, "nested-v1", lambda c: c.update(architectures=["Qwen3DFlashDraftModel"]))
    rc, doc = as_json("verify", str(d))
    assert rc == 1
    found = {f["details"]["engines"][0]: f for f in findings(doc, "DF160")}
    assert set(found) == {"vllm>=0.34", "sglang>=0.5.19"}
    assert found["vllm>=0.34"]["details"]["looked_up"] == "DFlashQwen3DFlashDraftModel"
    assert all(f["details"]["wants"] == "DFlashDraftModel" for f in found.values())
    r = invoke("compat", str(d), "--engine", "vllm@0.27.1")
    assert r.exit_code == 1 and '"DFlashDraftModel"' in flat_text(r.output)


def test_registered_architectures_pass(tmp_path: Path) -> None:
    for base in ("nested-v1", "nested-v2"):
        rc, doc = as_json("verify", str(FIXTURES / "good" / base))
        assert not findings(doc, "DF160"), base


# --- speculative_tokens against block_size (vllm-project/speculators#456) -------------------------------


def test_speculative_tokens_equal_to_block_size_fail_vllm(tmp_path: Path) -> None:
    def edit(c: dict[str, Any]) -> None:
        c["speculators_config"]["proposal_methods"][0]["speculative_tokens"] = c["block_size"]

    d = drafter(tmp_path, "flat-v1", edit)
    rc, doc = as_json("verify", str(d))
    [f] = findings(doc, "DF162")
    key = "speculators_config.proposal_methods[0].speculative_tokens"
    want = {"engines": ["vllm>=0.34"], "block_size": 8, "value": 8, "key": key, "source": ""}
    assert f["details"] | {"source": ""} == want
    assert "set it to 7" in f["message"]
    rc, doc = as_json("compat", str(d), "--engine", "vllm@0.29.0", "--engine", "speculators")
    r = rows(doc)
    assert r["vllm>=0.29,<0.31"]["verdict"] == "fails" and says(r["vllm>=0.29,<0.31"], "DF162")
    assert r["speculators>=0.9,<0.10"]["verdict"] == "loads"
    assert not findings(as_json("verify", str(FIXTURES / "good" / "flat-v1"))[1], "DF162")  # 7 of 8


# --- sidecars (sgl-project/sglang#27924) ----------------------------------------------------------------


def test_a_mask_embedding_sidecar_is_named_with_its_readers_and_the_conversion(tmp_path: Path) -> None:
    d = drafter(tmp_path, "nested-v1")
    (d / "mask_embedding.pt").write_bytes(b"\x80\x04not really a pickle")  # never opened
    rc, doc = as_json("verify", str(d))
    [f] = findings(doc, "DF630")
    assert f["file"] == "mask_embedding.pt" and f["severity"] == "warning"
    assert f["details"]["read_by"] == ["vllm"] and f["details"]["tensor_read_by"] == ["exllamav3"]
    command = f["details"]["command"]
    assert "weights_only=True" in command and "save_file({'mask_embedding'" in command
    assert "exllamav3==1.6.5:exllamav3/architecture/dflash.py" in f["message"]
    assert findings(doc, "DF602")  # still a pickle: reported, never loaded
    text = flat_text(invoke("verify", str(d)).output)
    assert "learned mask embedding" in text and "SGLang 0.5.18-0.5.23 reads neither" in text
    [ignored] = findings(doc, "DF631")
    assert ignored["details"]["engines"] == ["sglang>=0.5.19"] and ignored["severity"] == "warning"
    rc, doc = as_json("compat", str(d), "--engine", "sglang", "--engine", "vllm")
    r = rows(doc)
    assert (r["sglang>=0.5.19"]["verdict"], codes(r["sglang>=0.5.19"])[:1]) == ("degraded", ["DF631"])
    assert r["vllm>=0.34"]["verdict"] == "loads"  # it reads the file itself
    plain = drafter(tmp_path, "nested-v1", name="plain")
    assert (
        rows(as_json("compat", str(plain), "--engine", "sglang")[1])["sglang>=0.5.19"]["verdict"] == "loads"
    )


# --- GGUF: sliding-window keys (ikawrakow/ik_llama.cpp#2021) and format before geometry ----------------


def _without_window(tmp: Path) -> Path:
    from _kit.gguf import rewrite
    from dflash2_ckpt.formats import gguf_names as N

    def drop(arch: str, kv: dict, tensors: list) -> tuple[str, dict, list]:
        kv.pop(N.KEY_WINDOW), kv.pop(N.KEY_WINDOW_PATTERN)
        return arch, kv, tensors

    return rewrite(FIXTURES / "gguf" / "drafter-v2.gguf", tmp / "no-window.gguf", drop)


def test_convert_writes_the_window_and_verify_errs_without_it(tmp_path: Path) -> None:
    from _kit.gguf import header_of, to_gguf
    from dflash2_ckpt.formats import gguf_names as N

    h = header_of(to_gguf(FIXTURES / "good" / "nested-v2", tmp_path / "out.gguf"))
    assert h.get(N.KEY_WINDOW) == 16 and h.get(N.KEY_WINDOW_PATTERN) == [True, True]
    rc, doc = as_json("verify", str(_without_window(tmp_path)))
    assert rc == 1
    [f] = findings(doc, "DF914")
    assert f["field"] == N.KEY_WINDOW and "full attention" in f["message"]
    r = as_json("compat", str(tmp_path / "no-window.gguf"), "--engine", "llama.cpp")[1]
    assert r["engines"][0]["verdict"] == "fails" and "DF914" in r["engines"][0]["reasons"][0]["message"]


def test_a_dflash2_gguf_with_no_window_and_no_source_record_is_a_warning(tmp_path: Path) -> None:
    """Without the source config it was converted from, the GGUF cannot tell whether the drafter slid: every
    published DFlash2 drafter did, so a window-less DFlash2 file is a warning (DF915), not an error."""
    from _kit.gguf import rewrite
    from dflash2_ckpt.formats import gguf_names as N

    def drop(arch: str, kv: dict, tensors: list) -> tuple[str, dict, list]:
        for key in (N.KEY_WINDOW, N.KEY_WINDOW_PATTERN, N.KEY_SOURCE_CONFIG):
            kv.pop(key, None)
        return arch, kv, tensors

    bare = rewrite(FIXTURES / "gguf" / "drafter-v2.gguf", tmp_path / "bare.gguf", drop)
    rc, doc = as_json("verify", str(bare))
    [f] = findings(doc, "DF915")
    assert f["severity"] == "warning" and f["field"] == N.KEY_WINDOW and "full attention" in f["message"]
    assert not findings(doc, "DF914") and rc == 0


def test_an_engine_that_reads_no_gguf_says_the_format_first(tmp_path: Path) -> None:
    bad = FIXTURES / "gguf" / "top-k-too-large.gguf"
    rc, doc = as_json("compat", str(bad), "--engine", "vllm", "--engine", "sglang", "--engine", "mlx-vlm")
    for e in doc["engines"]:
        first = e["reasons"][0]["message"]
        assert "not GGUF" in first and "--to nested" in first and "DF907" not in first, e
        assert "verify reports" not in first
    text = flat_text(invoke("compat", str(bad), "--engine", "sglang").output)
    assert "reads safetensors (nested), not GGUF" in text


# --- DSpark: DFlash's sibling family (vllm-project/vllm#56792) ------------------------------------------


def test_dspark_is_served_by_vllm_and_sglang_and_not_validated(tmp_path: Path) -> None:
    d = real_checkpoint(tmp_path, "deepseek-ai_dspark_qwen3_8b_block7")
    rc, doc = as_json("compat", str(d))
    r = rows(doc)
    for pid in ("vllm>=0.34", "sglang>=0.5.19", "llama.cpp>=b10662"):
        assert (r[pid]["verdict"], codes(r[pid])) == ("not-validated", ["DF850"]), pid
        assert "does not validate it further" in r[pid]["reasons"][0]["message"]
    assert "Qwen3DSparkModel" in r["vllm>=0.34"]["reasons"][0]["message"]
    assert r["dflash-mlx>=0.1.0"]["verdict"] == "unsupported"
    # every release that registers DSpark drafters (vLLM from 0.25.0, SGLang from 0.5.16); the ranges before
    # hold no DSpark drafter
    before = {
        ("vllm", "<0.20"),
        ("vllm", ">=0.20,<0.23"),
        ("sglang", "<0.5.11"),
        ("sglang", ">=0.5.11,<0.5.14"),
    }
    served = [
        e
        for e in doc["engines"]
        if e["engine"] in ("vllm", "sglang") and (e["engine"], e["versions"]) not in before
    ]
    assert all(
        e["verdict"] == "unsupported" for e in doc["engines"] if (e["engine"], e["versions"]) in before
    )
    assert served and not any(e["verdict"] == "unsupported" for e in served)
    text = flat_text(invoke("compat", str(d), "--engine", "vllm").output)
    assert "not-validated" in text and "unsupported" not in text
