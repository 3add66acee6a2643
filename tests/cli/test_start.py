"""A light start, held by what each command imports (load-insensitive, unlike a timing): `--version`
loads no command, `hook config` neither pydantic nor rich, a header verify of a valid drafter no pydantic,
a dialect conversion what a header verify loads plus its own code, and none of them gguf, numpy, the Hub
client or another command's report code. A GGUF file, and a config pydantic must judge, still load what
they need. bench/bench_start.py has the timings."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
GOOD = "fixtures/good/nested-v2"
HEAVY = (
    "pydantic",
    "rich",
    "gguf",
    "numpy",
    "huggingface_hub",
    "torch",
    "dflash2_ckpt.audit",
    "dflash2_ckpt.accept.report",
    "dflash2_ckpt.report.sarif",
    "dflash2_ckpt.report.audit",
    "dflash2_ckpt.sources.hub",
    "dflash2_ckpt.convert",
    "dflash2_ckpt.diff",
)

_RUN = (
    "import json, runpy, sys\nsys.argv = ['dflash2-ckpt', *sys.argv[1:]]\ntry:\n"
    "    runpy.run_module('dflash2_ckpt', run_name='__main__')\nexcept SystemExit as e:\n    code = e.code\n"
    "sys.stderr.write('\\nMODULES ' + json.dumps([code, sorted(sys.modules)]) + '\\n')\n"
)


def loaded(*args: str, cwd: Path = ROOT) -> tuple[int, set[str]]:
    p = subprocess.run(
        [sys.executable, "-c", _RUN, *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    code, mods = json.loads(p.stderr.rsplit("MODULES ", 1)[1])
    return code, set(mods)


def heavy(mods: set[str]) -> list[str]:
    return sorted(h for h in HEAVY if h in mods)


def test_version_loads_no_command() -> None:
    code, mods = loaded("--version")
    assert code == 0
    assert heavy(mods) == [] and not any(
        m.startswith(("dflash2_ckpt.usecases", "dflash2_ckpt.checks")) for m in mods
    )


def test_hook_config_loads_neither_pydantic_nor_rich() -> None:
    code, mods = loaded("hook", "config", f"{GOOD}/config.json")
    assert code == 0
    assert heavy(mods) == []


@pytest.mark.parametrize("args", [("hook", "config", f"{GOOD}/config.json"), ("verify", GOOD)])
def test_a_run_without_output_files_loads_no_file_writer(args: tuple[str, ...]) -> None:
    """The report-file writer (and tempfile, shutil, random under it) loaded on every run that rendered a
    report, though only --output writes a file (--version loads tempfile and shutil through importlib.metadata)."""
    code, mods = loaded(*args)
    assert code == 0
    assert sorted(m for m in ("dflash2_ckpt.report.write", "tempfile", "shutil") if m in mods) == []


def test_header_verify_loads_rich_for_its_table_and_nothing_heavier() -> None:
    code, mods = loaded("verify", GOOD)
    assert code == 0
    assert heavy(mods) == ["rich"]


# what a dialect conversion has no use for: the writer leaves writeback to the kernel (no ctypes for
# sync_file_range), names its staging with os.urandom and os.uname (no secrets, hashlib, socket), and
# removes a directory only on failure (no shutil, bz2, lzma)
CONVERT_UNUSED = ("ctypes", "secrets", "hashlib", "socket", "shutil", "subprocess", "bz2", "lzma")


@pytest.mark.parametrize("to", ["flat", "nested"])
def test_dialect_convert_loads_what_a_header_verify_does_and_its_own_code(tmp_path: Path, to: str) -> None:
    src = GOOD if to == "flat" else "fixtures/good/flat-v2"
    code, mods = loaded(
        "convert",
        src,
        "-o",
        str(tmp_path / "out"),
        "--to",
        to,
        "--verifier-name",
        "bench/target",
        "--verifier-arch",
        "Qwen3ForCausalLM",
    )
    assert code == 0 and (tmp_path / "out" / "model.safetensors").is_file()
    _, verify_mods = loaded("verify", src)
    assert heavy(mods - {"dflash2_ckpt.convert"}) == ["rich"]  # its table, as verify's
    assert sorted(m for m in CONVERT_UNUSED if m in mods) == []
    extra = {
        m
        for m in mods - verify_mods
        if not m.startswith(
            (
                "dflash2_ckpt.convert",
                "dflash2_ckpt.cli.convert",
                "dflash2_ckpt.report.text_convert",
                # the meaning check and its table
                "dflash2_ckpt.engines.meaning",
                "dflash2_ckpt.report.text_meaning",
            )
        )
    }
    assert extra <= {"difflib", "heapq", "_heapq", "signal"}, sorted(
        extra
    )  # click's option suggestions; SIGTERM


def test_what_a_bad_config_or_a_gguf_file_needs_still_loads(tmp_path: Path) -> None:
    bad = tmp_path / "bad"
    bad.mkdir()
    cfg = json.loads((ROOT / GOOD / "config.json").read_text())
    (bad / "config.json").write_text(json.dumps({**cfg, "hidden_size": "wide"}))
    code, mods = loaded("hook", "config", str(bad / "config.json"))
    assert code == 1 and "pydantic" in mods  # pydantic writes the finding (DF101)
    ggufs = sorted((ROOT / "fixtures").rglob("*.gguf"))
    if not ggufs:
        pytest.skip("no GGUF fixture in this checkout")
    code, mods = loaded("verify", str(ggufs[0]))
    assert "gguf" in mods
