"""[tool.dflash2-ckpt] settings: found from the working directory upward, --config, per-path entries,
the command line winning, `dflash2-ckpt config` showing each value's origin, unknown keys refused."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from _kit.cli import one_json, run
from conftest import FIXTURES

BROKEN = FIXTURES / "broken" / "fc-wrong-shape"  # one DF203 error


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A publisher's repository: two copies of a drafter with a DF203 error, one under drafters/legacy."""
    shutil.copytree(BROKEN, tmp_path / "drafters" / "legacy" / "a")
    shutil.copytree(BROKEN, tmp_path / "drafters" / "b")
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "x"\n\n[tool.dflash2-ckpt]\nengines = ["vllm"]\n'
        '\n[tool.dflash2-ckpt.per-path."drafters/legacy"]\nignore = ["DF203"]\n'
    )
    monkeypatch.chdir(tmp_path / "drafters")  # found from the working directory upward
    return tmp_path


def test_per_path_entry_applies_below_its_folder_only(project: Path) -> None:
    assert run("verify", "legacy/a")[0] == 0
    assert run("verify", "b")[0] == 1


def test_command_line_wins_over_the_table_but_per_path_ignores_stay(project: Path) -> None:
    # ruff's per-file-ignores apply under --ignore too: the legacy entry's DF203 stays ignored
    assert run("verify", "legacy/a", "--ignore", "DF4")[0] == 0
    assert run("verify", "legacy/a", "--select", "DF203")[0] == 0  # select and ignore are separate keys
    assert run("verify", "b", "--ignore", "DF203")[0] == 0
    (project / "pyproject.toml").write_text('[tool.dflash2-ckpt]\nignore = ["DF203"]\n')
    assert run("verify", "b")[0] == 0
    assert run("verify", "b", "--ignore", "DF4")[0] == 1  # --ignore replaces the table's ignore


def test_config_shows_each_value_and_its_origin(project: Path) -> None:
    code, out, _ = run("config", "legacy/a", "--strict", "--format", "json")
    assert code == 0
    doc = one_json(out)
    pyproject = str(project / "pyproject.toml")
    assert doc["file"] == pyproject
    s = doc["settings"]
    assert s["ignore"] == {
        "value": ["DF203"],
        "origin": f'{pyproject} [tool.dflash2-ckpt.per-path."drafters/legacy"]',
    }
    assert s["engines"] == {"value": ["vllm"], "origin": f"{pyproject} [tool.dflash2-ckpt]"}
    assert s["strict"] == {"value": True, "origin": "command line"}
    assert s["target"] == {"value": None, "origin": "default"}
    code, out, _ = run("config", "b")
    assert code == 0 and "ignore   = []" in out and "# default" in out and 'engines  = ["vllm"]' in out


def test_explicit_config_file_with_keys_at_top_level(project: Path, tmp_path: Path) -> None:
    other = tmp_path / "ci.toml"
    other.write_text('select = ["DF1"]\n')
    assert run("verify", "b", "--config", str(other))[0] == 0  # DF203 is not selected; the pyproject unused
    code, out, _ = run("config", "--config", str(other), "--format", "json")
    assert one_json(out)["settings"]["select"]["origin"] == f"{other} [tool.dflash2-ckpt]"


@pytest.mark.parametrize(
    "body, message",
    [
        ('[tool.dflash2-ckpt]\nselectt = ["DF2"]\n', "unknown key tool.dflash2-ckpt.selectt"),
        (
            '[tool.dflash2-ckpt.per-path."x/*"]\nstrictt = true\n',
            'unknown key tool.dflash2-ckpt.per-path."x/*".strictt',
        ),
        ('[tool.dflash2-ckpt]\nstrict = "yes"\n', "tool.dflash2-ckpt.strict must be true or false"),
        ('[tool.dflash2-ckpt]\nignore = ["DF999"]\n', "unknown finding code or prefix 'DF999'"),
        ("[tool.dflash2-ckpt\n", "not valid TOML"),
    ],
)
def test_a_bad_settings_file_is_a_usage_error_naming_the_key(project: Path, body: str, message: str) -> None:
    (project / "pyproject.toml").write_text(body)
    code, out, err = run("verify", "b")
    assert code == 2 and message in err and "Traceback" not in err
    code, out, _ = run("verify", "b", "--format", "json")
    doc = one_json(out)
    assert (
        code == 2
        and message in doc["error"]["message"]
        and doc["error"]["path"] == str(project / "pyproject.toml")
    )


def test_an_engine_the_profiles_do_not_cover_is_a_usage_error(project: Path) -> None:
    (project / "pyproject.toml").write_text('[tool.dflash2-ckpt]\nengines = ["vllm@0.28.1"]\n')
    code, _, err = run("compat", "b")
    assert code == 2 and "engines: " in err and "[tool.dflash2-ckpt]" in err


def test_no_settings_file_means_defaults(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    code, out, _ = run("config", "--format", "json")
    doc = one_json(out)
    assert (
        code == 0 and doc["file"] is None and {v["origin"] for v in doc["settings"].values()} == {"default"}
    )


CODES = sorted(__import__("dflash2_ckpt.codes", fromlist=["REGISTRY"]).REGISTRY)


@given(
    table=st.lists(st.sampled_from(CODES), max_size=4),
    entries=st.lists(st.lists(st.sampled_from(CODES), max_size=3), max_size=3),
    command_line=st.one_of(st.none(), st.lists(st.sampled_from(CODES), min_size=1, max_size=3)),
)
@settings(max_examples=60, deadline=None)
def test_a_matching_entry_never_unignores_a_code(
    tmp_path_factory: pytest.TempPathFactory,
    table: list[str],
    entries: list[list[str]],
    command_line: list[str] | None,
) -> None:
    """ruff's extend-per-file-ignores: a code is ignored for a checkpoint when the table (or the command
    line's --ignore, in its place) or any matching entry ignores it, and only then."""
    from dflash2_ckpt.cli.settings import resolve
    from dflash2_ckpt.findings import keep

    d = tmp_path_factory.mktemp("s")
    body = f"[tool.dflash2-ckpt]\nignore = {json.dumps(table)}\n" + "".join(
        f'[tool.dflash2-ckpt.per-path."d{"/*" * n}"]\nignore = {json.dumps(e)}\n'
        for n, e in enumerate(entries)
    )
    (d / "pyproject.toml").write_text(body)
    given_ = {"ignore": command_line} if command_line else None
    ignore = resolve(d / "pyproject.toml", "d/x/y/z", given=given_).values["ignore"]
    expected = set(command_line or table).union(*entries)
    assert {c for c in CODES if not keep(c, (), ignore)} == expected
