"""Issue 22, conversions under hostile input and faults: a destination that holds the source is refused
for every conversion kind; dead runs' staging is cleaned beside any destination and reported; the loser
of two concurrent conversions to one destination exits 2; GGUF metadata an attacker controls ends in a
finding or a clean refusal."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from _kit.cli import run_json
from _kit.gguf import FIXTURES, rewrite, to_gguf
from dflash2_ckpt.formats import gguf_names as N
from gguf import GGUFValueType

ROOT = Path(__file__).resolve().parents[2]

GOOD = FIXTURES / "good" / "nested-v2"
FLAT = ("--to", "flat", "--verifier-name", "tiny/target", "--verifier-arch", "Qwen3ForCausalLM")


def tree(d: Path) -> dict[str, bytes]:
    return {p.relative_to(d).as_posix(): p.read_bytes() for p in sorted(d.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def gguf(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return to_gguf(GOOD, tmp_path_factory.mktemp("g") / "d.gguf")


def _edited(gguf: Path, dst: Path, key: str, value: tuple) -> Path:
    def edit(arch, kv, tensors):  # noqa: ANN001, ANN202
        kv[key] = value
        return arch, kv, tensors

    return rewrite(gguf, dst, edit)


# ---------------------------------------------------------------- item 7: overlap, every kind


@pytest.mark.parametrize("to", ["nested", "flat"])
def test_a_gguf_source_inside_the_destination_is_never_deleted(gguf: Path, tmp_path: Path, to: str) -> None:
    d = tmp_path / "models"
    d.mkdir()
    src = Path(shutil.copy(gguf, d / "d.gguf"))
    (d / "neighbour.txt").write_text("keep me")
    before = tree(d)
    extra = ("--verifier-name", "tiny/target", "--verifier-arch", "Qwen3ForCausalLM") if to == "flat" else ()
    for dst in (d, src, d / "d.gguf" / "sub"):
        code, doc = run_json("convert", str(src), "-o", str(dst), "--to", to, "--force", *extra)
        assert code == 2 and "overlaps the source" in doc["error"]["message"], (dst, doc)
    assert tree(d) == before and src.is_file()


def test_to_gguf_into_the_source_or_its_folder_is_refused(tmp_path: Path) -> None:
    src = Path(shutil.copytree(GOOD, tmp_path / "ckpt"))
    before = tree(src)
    for dst in (src / "x.gguf", tmp_path.with_suffix(".gguf")):
        code, doc = run_json(
            "convert",
            str(src),
            "-o",
            str(dst),
            "--to",
            "gguf",
            "--target",
            str(FIXTURES / "targets" / "tiny-target"),
            "--force",
        )
        if dst.parent == src:
            assert code == 2 and "overlaps the source" in doc["error"]["message"], doc
    assert tree(src) == before


def test_the_dialect_path_refuses_a_destination_that_contains_the_source(tmp_path: Path) -> None:
    src = Path(shutil.copytree(GOOD, tmp_path / "a" / "ckpt"))
    code, doc = run_json("convert", str(src), "-o", str(tmp_path / "a"), "--to", "nested", "--force")
    assert code == 2 and "contains the source" in doc["error"]["message"]
    assert tree(src) == tree(GOOD)


# ---------------------------------------------------------------- item 8: stale staging beside any DST


def _dead_pid() -> int:
    p = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, check=True
    )
    return int(p.stdout)


def test_dead_runs_staging_for_another_destination_is_removed_and_reported(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    stale = out / f".other.dflash2-tmp-{_dead_pid()}-0badc0de"  # a kill -9 during a run to `other`
    stale.mkdir()
    (stale / "model.safetensors").write_bytes(b"\0" * 4096)
    # a live pid that is not the writer (recycled): its start time differs from the owner record
    recycled = out / f".third.dflash2-tmp-{os.getppid()}-00c0ffee"
    recycled.mkdir()
    (out / (recycled.name + ".owner")).write_text(
        json.dumps({"pid": os.getppid(), "start": "1", "host": os.uname().nodename})
    )
    code, doc = run_json("convert", str(GOOD), "-o", str(out / "mine"), *FLAT)
    assert code == 0, doc
    assert not stale.exists() and not recycled.exists() and not (out / (recycled.name + ".owner")).exists()
    assert any(stale.name in c and "4,096 bytes" in c for c in doc["cleaned"]), doc["cleaned"]
    assert any(recycled.name in c for c in doc["cleaned"]), doc["cleaned"]
    assert sorted(p.name for p in out.iterdir()) == ["mine"]


def test_a_live_runs_staging_is_left_alone(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    live = out / f".other.dflash2-tmp-{os.getpid()}-0badc0de"
    live.mkdir()
    code, doc = run_json("convert", str(GOOD), "-o", str(out / "mine"), *FLAT)
    assert code == 0 and live.is_dir() and not doc["cleaned"]


# ---------------------------------------------------------------- item 13: two converts, one DST


def test_the_loser_of_a_race_to_one_destination_exits_2(tmp_path: Path) -> None:
    dst = tmp_path / "out"
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    cmd = [
        sys.executable,
        "-c",
        "from dflash2_ckpt.cli import main; main()",
        "convert",
        str(GOOD),
        "-o",
        str(dst),
        "--to",
        "flat",
        "--verifier-name",
        "tiny/target",
        "--verifier-arch",
        "Qwen3ForCausalLM",
        "--format",
        "json",
    ]
    procs = [subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env) for _ in range(3)]
    outs = [p.communicate(timeout=120) for p in procs]
    results = [(p.returncode, o.decode(), e.decode()) for p, (o, e) in zip(procs, outs)]
    codes = sorted(c for c, _, _ in results)
    assert codes.count(0) == 1 and codes.count(2) == 2, results
    for code, out, _err in results:
        if code == 2:
            assert "already exists" in json.loads(out)["error"]["message"], out
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


def test_install_after_another_run_put_the_destination_there_is_exit_2(tmp_path: Path) -> None:
    from dflash2_ckpt.convert.staging import install, make_staging
    from dflash2_ckpt.errors import ConversionUsageError

    dst = tmp_path / "out"
    tmp = make_staging(dst)
    (tmp / "config.json").write_text("{}")
    dst.mkdir()
    (dst / "config.json").write_text('{"theirs": 1}')
    with pytest.raises(ConversionUsageError, match="already exists"):
        install(tmp, dst, force=False)
    assert (dst / "config.json").read_text() == '{"theirs": 1}'


# ---------------------------------------------------------------- item 9: GGUF robustness


@pytest.mark.parametrize(
    "value",
    [(5, GGUFValueType.UINT32, None), (True, GGUFValueType.BOOL, None), (1.5, GGUFValueType.FLOAT32, None)],
    ids=["scalar", "bool", "float"],
)
def test_target_layers_of_the_wrong_type_is_df902(gguf: Path, tmp_path: Path, value: tuple) -> None:
    g = _edited(gguf, tmp_path / "t.gguf", N.KEY_TARGET_LAYERS, value)
    code, doc = run_json("verify", str(g))
    assert code == 1 and "DF902" in {f["code"] for f in doc["findings"]}
    for cmd in ("inspect", "compat"):
        code, doc = run_json(cmd, str(g))
        assert code in (0, 1), (cmd, doc)


@pytest.mark.parametrize(
    "meta",
    ['{"a": 1}', '{"a":' * 100_000 + '"x"' + "}" * 100_000, '{"a": 1' + "0" * 100_000 + "}", "not json"],
    ids=["not-strings", "deep", "huge-int", "not-json"],
)
def test_bad_recorded_safetensors_metadata_is_dropped_with_a_note(
    gguf: Path, tmp_path: Path, meta: str
) -> None:
    g = _edited(gguf, tmp_path / "m.gguf", N.KEY_SOURCE_ST_META, (meta, GGUFValueType.STRING, None))
    code, doc = run_json("convert", str(g), "-o", str(tmp_path / "out"), "--to", "nested")
    assert code == 0, doc
    assert any(N.KEY_SOURCE_ST_META in n for n in doc["notes"]), doc["notes"]


def test_a_gguf_whose_drafter_fails_verify_is_not_converted(gguf: Path, tmp_path: Path) -> None:
    g = _edited(gguf, tmp_path / "kv0.gguf", N.KEY_HEADS_KV, (0, GGUFValueType.UINT32, None))
    code, doc = run_json("convert", str(g), "-o", str(tmp_path / "out"), "--to", "nested")
    assert code == 1 and doc["error"]["type"] == "SourceFindingsError", doc
    assert not (tmp_path / "out").exists()


def test_to_gguf_without_the_suffix_is_refused_before_any_work(tmp_path: Path) -> None:
    code, doc = run_json(
        "convert",
        str(GOOD),
        "-o",
        str(tmp_path / "drafter"),
        "--to",
        "gguf",
        "--target",
        str(FIXTURES / "targets" / "tiny-target"),
    )
    assert code == 2 and "does not end in .gguf" in doc["error"]["message"]
    assert list(tmp_path.iterdir()) == []


def test_gguf_to_flat_takes_the_verifier_architectures(gguf: Path, tmp_path: Path) -> None:
    out = tmp_path / "flat"
    code, doc = run_json(
        "convert",
        str(gguf),
        "-o",
        str(out),
        "--to",
        "flat",
        "--verifier-name",
        "org/target",
        "--verifier-arch",
        "MyTargetForCausalLM",
    )
    assert code == 0, doc
    cfg = json.loads((out / "config.json").read_text())
    assert cfg["speculators_config"]["verifier"]["architectures"] == ["MyTargetForCausalLM"]


def test_a_config_that_indents_past_the_cap_still_converts(tmp_path: Path) -> None:
    import hostile

    src = hostile.indent_blowup(tmp_path)
    assert (src / "config.json").stat().st_size < 16 << 20
    code, doc = run_json("verify", str(src))
    assert code == 0, doc
    out = tmp_path / "flat"
    code, doc = run_json("convert", str(src), "-o", str(out), *FLAT)
    assert code == 0, doc  # before: the indented output (> 64 MB) failed its own read-back
    assert (out / "config.json").stat().st_size < 64 << 20
    code, doc = run_json("verify", str(out))
    assert code == 0, doc


@pytest.mark.parametrize(
    "key,value",
    [
        (N.KEY_EMBED, 0),
        (N.KEY_BLOCK_COUNT, 4096),
        (N.KEY_HEADS, 0),
        (N.KEY_HEADS_KV, 0),
        (N.KEY_KEY_LEN, 0),
        (N.KEY_FFN, 0),
        (N.KEY_BLOCK_SIZE, 1),
        (N.KEY_CONV_GROUP, 0),
    ],
    ids=[
        "zero-embedding",
        "4096-blocks",
        "zero-heads",
        "zero-kv-heads",
        "zero-key-length",
        "zero-ffn",
        "block-size-1",
        "zero-conv-group",
    ],
)
def test_gguf_to_hf_is_refused_or_writes_what_verify_passes(
    gguf: Path, tmp_path: Path, key: str, value: int
) -> None:
    """GGUF geometry an attacker controls never installs a checkpoint that fails verify: the conversion is
    refused with a typed error and nothing at the destination, or its output verifies."""
    g = _edited(gguf, tmp_path / "g.gguf", key, (value, GGUFValueType.UINT32, None))
    out = tmp_path / "out"
    code, doc = run_json("convert", str(g), "-o", str(out), "--to", "nested")
    if code == 0:
        vcode, vdoc = run_json("verify", str(out))
        assert vcode == 0, vdoc["findings"]
    else:
        assert code == 1 and doc["error"]["type"] in ("SourceFindingsError", "ConversionError"), doc
        assert not out.exists()
