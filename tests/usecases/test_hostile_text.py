"""A hostile publisher's text, files and Hub, through the CLI: names, globs, configs, cards and parser errors
print escaped (no line ever starts a GitHub workflow command, no value is rich markup); the model card shows
config values inert and its front matter is written by the safe dumper; YAML, settings files and every Hub
call are bounded; bad input is a typed error or a finding, whatever DFLASH2_CKPT_DEBUG says."""

from __future__ import annotations

import json
import re
import shutil
import time
from pathlib import Path

import pytest
import yaml

from _kit.cli import invoke, run_json
from _kit.cli import run_output as run
from _kit.fakehub import FakeHub
from conftest import FIXTURES

NAME = "x\n::error title=x::PWNED\n::group::PWNED"
SHOWN = "x\\n::error title=x::PWNED\\n::group::PWNED"
GOOD = FIXTURES / "good" / "nested-v2"
BROKEN = FIXTURES / "broken" / "field-wrong-type"
TINY_TARGET = FIXTURES / "targets" / "tiny-target"
TOKENIZER_KEY = "dflash2_ckpt_tokenizer_sha256"


def no_command(out: str) -> None:
    """What the GitHub runner would run from a log: a line starting `::` (after whitespace), or `##[`."""
    for line in out.splitlines():
        assert not line.lstrip().startswith("::"), line
        assert "##[" not in line, line


def unwrapped(out: str) -> str:
    """The output with the lines a long value was wrapped onto joined again (a wrap breaks at a space)."""
    return re.sub(r" *\n +", " ", out)


def copy(src: Path, dst: Path) -> Path:
    shutil.copytree(src, dst)
    return dst


@pytest.fixture
def hostile(tmp_path: Path) -> Path:
    return copy(GOOD, tmp_path / NAME)


@pytest.fixture
def hostile_broken(tmp_path: Path) -> Path:
    return copy(BROKEN, tmp_path / NAME)


# -- text output: a directory name ------------------------------------------------------------------------


@pytest.mark.parametrize("argv", [["verify"], ["compat"], ["inspect"], ["config", "--show"]])
def test_a_directory_name_prints_on_one_line(argv: list[str], hostile: Path) -> None:
    code, out = run(*argv, str(hostile))
    assert code == 0, out
    no_command(out)
    assert SHOWN in unwrapped(out)


def test_a_directory_name_in_findings_prints_on_one_line(hostile_broken: Path) -> None:
    code, out = run("verify", str(hostile_broken))
    assert code == 1 and SHOWN in unwrapped(out)
    no_command(out)


@pytest.mark.parametrize("level", ["verify", "config"])
def test_the_hook_prints_a_directory_name_on_one_line(level: str, hostile_broken: Path) -> None:
    code, out = run("hook", level, str(hostile_broken / "config.json"))
    assert code == 1, out
    no_command(out)
    assert f"{SHOWN}/config.json:" in out and f"{SHOWN}: FAILED" in out


def test_a_name_that_is_a_workflow_command_is_broken_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # relative: the name starts the hook's lines
    d = copy(BROKEN, Path("::error title=x::PWNED"))
    for argv in (["hook", "config", str(d / "config.json")], ["verify", str(d)], ["compat", str(d)]):
        code, out = run(*argv)
        # where the name starts a line its colon is escaped; compat's headline puts it mid-line, as it is
        assert code == 1 and ("\\x3a:error title=x::PWNED" in out or ": ::error title=x::PWNED" in out), argv
        no_command(out)


def test_convert_prints_a_directory_name_on_one_line(hostile: Path, tmp_path: Path) -> None:
    out_dir = tmp_path / f"{NAME}-out"
    for extra in (["--dry-run"], []):
        code, out = run(
            "convert", str(hostile), "-o", str(out_dir), "--to", "flat", "--target", str(TINY_TARGET), *extra
        )
        assert code == 0 and SHOWN in unwrapped(out), out
        no_command(out)
    code, out = run(
        "convert",
        str(hostile),
        "-o",
        str(tmp_path / "o2"),
        "--to",
        "flat",
        "--verifier-name",
        "a\n::error title=x::PWNED",
        "--dry-run",
    )
    assert code != 0 and "a\\n::error title=x::PWNED" in out, out
    no_command(out)


def test_fix_diff_prints_a_directory_name_on_one_line(tmp_path: Path) -> None:
    d = copy(FIXTURES / "broken" / "engines-split-causality", tmp_path / NAME)
    code, out = run("verify", "--diff", str(d))
    assert code == 1 and "Would fix 4 finding(s)" in out
    no_command(out)
    code, out = run("verify", "--fix", str(d))
    assert f"{SHOWN}: fixed 4 finding(s) in config.json" in out, out
    no_command(out)


def test_rich_markup_in_a_name_prints_as_it_is(tmp_path: Path) -> None:
    d = copy(BROKEN, tmp_path / "a[/]b[bold red]c")
    for argv in (["verify", str(d)], ["compat", str(d)], ["inspect", str(d)]):
        code, out = run(*argv)
        assert code in (0, 1), out
        assert "a[/]b[bold red]c" in out, argv


# -- text output: the settings file -----------------------------------------------------------------------


def test_a_per_path_glob_prints_on_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    copy(GOOD, tmp_path / NAME)
    (tmp_path / "pyproject.toml").write_text(
        "[tool.dflash2-ckpt]\n[tool.dflash2-ckpt.per-path]\n"
        '"x\\n::error title=x::PWNED\\n::group::PWNED" = { ignore = ["DF401"] }\n'
    )
    code, out = run("config", "--show", NAME)
    assert code == 0 and out.count(SHOWN) >= 3, out  # the path, the matched glob, the origin
    no_command(out)
    (tmp_path / "pyproject.toml").write_text(
        '[tool.dflash2-ckpt.per-path]\n"x\\n::error title=x::PWNED" = { bogus = 1 }\n'
    )
    for argv in (["verify", NAME], ["config", "--show", NAME], ["hook", "config", f"{NAME}/config.json"]):
        code, out = run(*argv)
        assert code == 2 and "unknown key" in out and "x\\n::error title=x::PWNED" in out, argv
        no_command(out)


def test_a_deeply_nested_settings_file_is_a_usage_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    copy(GOOD, tmp_path / "d")
    deep = "[" * 5000 + "]" * 5000
    (tmp_path / "pyproject.toml").write_text(f"[tool.dflash2-ckpt]\nselect = {deep}\n")
    for argv in (["verify", "d"], ["config", "--show", "d"], ["hook", "config", "d/config.json"]):
        for env in ({}, {"DFLASH2_CKPT_DEBUG": "1"}):
            code, out = run(*argv, env=env)
            assert code == 2 and "nests arrays or tables too deeply" in out and "pyproject.toml" in out, argv


# -- exit codes whatever DEBUG says --------------------------------------------------------------------------


def test_debug_shows_the_traceback_and_keeps_the_exit_code(monkeypatch: pytest.MonkeyPatch) -> None:
    from dflash2_ckpt.cli import settings

    def boom(*a: object, **k: object) -> None:
        raise RuntimeError("boom\n::error title=x::PWNED")

    monkeypatch.setattr(settings, "resolve", boom)
    code, out = run("config", "--show", str(GOOD))
    assert code == 3 and "RuntimeError: boom" in out and "DFLASH2_CKPT_DEBUG=1" in out
    assert "Traceback" not in out
    res = invoke("config", "--show", str(GOOD), env={"DFLASH2_CKPT_DEBUG": "1"})
    assert res.exit_code == 3 and "Traceback" in res.stderr and "RuntimeError" in res.stderr
    no_command(res.output)


# -- the tokenizer record and the target's tokenizer ------------------------------------------------------


def recorded(tmp_path: Path, value: object) -> Path:
    d = copy(GOOD, tmp_path / "drafter")
    cfg = json.loads((d / "config.json").read_text())
    cfg[TOKENIZER_KEY] = value
    (d / "config.json").write_text(json.dumps(cfg))
    return d


@pytest.mark.parametrize("value", ["sha256:" + "0" * 64, "0" * 63, "A" * 64, 7, ["0" * 64]])
def test_a_malformed_tokenizer_record_is_a_finding(tmp_path: Path, value: object) -> None:
    d = recorded(tmp_path, value)
    code, doc = run_json("verify", str(d))
    assert code == 1 and [f["code"] for f in doc["findings"]] == ["DF520"], doc
    other = copy(TINY_TARGET, tmp_path / "target")
    code, doc = run_json("verify", str(d), "--target", str(other))
    assert code == 1 and "DF520" in [f["code"] for f in doc["findings"]], doc


def test_a_lone_surrogate_in_the_targets_tokenizer_is_a_finding(tmp_path: Path) -> None:
    target = copy(TINY_TARGET, tmp_path / "target")
    doc = json.loads((target / "tokenizer.json").read_text())
    vocab = doc["model"]["vocab"]
    token = next(t for t, i in vocab.items() if i == 2)
    vocab["\ud800x"] = vocab.pop(token)
    (target / "tokenizer.json").write_text(json.dumps(doc))  # ASCII JSON: "\ud800x"
    d = recorded(tmp_path, "0" * 64)
    code, out = run_json("verify", str(d), "--target", str(target))
    assert code == 0, out
    f = next(f for f in out["findings"] if f["code"] == "DF511")
    assert "lone surrogate" in f["message"] and "token 2" in f["message"]
    code, text = run("verify", str(d), "--target", str(target))
    assert code == 0 and "Traceback" not in text


# -- push: the card ------------------------------------------------------------------------------------------


@pytest.fixture
def dest(hub: FakeHub) -> str:
    hub.add_commit("org/dest", {"README.md": b"# drafter\n"}, granted={"hf_granted"})
    return "org/dest"


def pushable(
    ckpts: dict[str, Path], tmp_path: Path, *, base: str | None = None, card: str | None = None
) -> Path:
    d = Path(shutil.copytree(ckpts["tiny"], tmp_path / "drafter"))
    if base is not None:
        cfg = json.loads((d / "config.json").read_text())
        cfg["speculators_config"]["verifier"]["name_or_path"] = base
        (d / "config.json").write_text(json.dumps(cfg))
    if card is not None:
        (d / "README.md").write_text(card)
    return d


def outside_code(markdown: str) -> str:
    """The card's text with code spans and fenced blocks taken out: what markdown renders as markup."""
    markdown = re.sub(r"(?ms)^(`{3,})[^\n]*\n.*?^\1\s*$", "", markdown)
    return re.sub(r"(`+)(.+?)\1", "", markdown)


PHISH = "[x](https://evil.example/phish) <img src=x onerror=alert(1)>\n---\n::error title=x::PWNED"


def test_a_hostile_base_model_is_inert_in_the_card_and_its_message(
    hub: FakeHub, ckpts: dict[str, Path], dest: str, tmp_path: Path
) -> None:
    d = pushable(ckpts, tmp_path, base=PHISH)
    code, out = run("push", str(d), dest, "--token", "hf_granted", "--dry-run")
    assert code == 0, out
    no_command(out)
    assert "base_model: [x](https://evil.example/phish) <img src=x onerror=alert(1)>\\n---\\n" in out
    code, out = run("push", str(d), dest, "--token", "hf_granted")
    assert code == 0, out
    no_command(out)
    text = (d / "README.md").read_text()
    meta = yaml.safe_load(text.split("\n---\n")[0].removeprefix("---\n"))
    assert meta["base_model"] == PHISH  # the safe dumper quoted it whole
    body = text.split("\n---\n", 1)[1]
    rendered = outside_code(body)
    assert "evil.example" not in rendered and "<img" not in rendered and "::error" not in rendered
    assert "evil.example" in body  # shown, as code


def test_a_hostile_tokenizer_record_never_reaches_the_card(
    hub: FakeHub, ckpts: dict[str, Path], dest: str, tmp_path: Path
) -> None:
    from dflash2_ckpt.usecases.model_card import Serving, body

    d = pushable(ckpts, tmp_path)
    cfg = json.loads((d / "config.json").read_text())
    cfg[TOKENIZER_KEY] = "0" * 8 + "`</code><script>alert(1)</script>"
    (d / "config.json").write_text(json.dumps(cfg))
    code, out = run("push", str(d), dest, "--token", "hf_granted")
    assert code == 1 and "DF520" in out and "nothing was uploaded" in out
    assert hub.commit_requests == []
    text = body("<img src=x onerror=alert(1)>", "v2", "flat", None, Serving((), ()), "1", cfg[TOKENIZER_KEY])
    assert "<script>" not in text and "<img" not in outside_code(text)


@pytest.mark.parametrize(
    "card, why",
    [
        ("---\nbase_model: [\n::error title=x::PWNED\nlicense: x\n---\n# x\n", "not YAML"),
        (
            "---\n"
            + "a: &a ["
            + ",".join(["lol"] * 9)
            + "]\n"
            + "".join(
                f"{chr(98 + i)}: &{chr(98 + i)} [{','.join(['*' + chr(97 + i)] * 9)}]\n" for i in range(8)
            )
            + "---\n# x\n",
            "alias",
        ),
        ("---\nx: " + "[" * 3000 + "]" * 3000 + "\n---\n# x\n", "nests deeper"),
    ],
)
def test_an_unreadable_card_is_df645(
    hub: FakeHub, ckpts: dict[str, Path], dest: str, tmp_path: Path, card: str, why: str
) -> None:
    d = pushable(ckpts, tmp_path, card=card)
    for env in ({}, {"DFLASH2_CKPT_DEBUG": "1"}):
        code, out = run("push", str(d), dest, "--token", "hf_granted", "--dry-run", env=env)
        assert code == 1 and "DF645" in out and why in out and "Traceback" not in out, out
        no_command(out)
    code, doc = run_json("push", str(d), dest, "--token", "hf_granted")
    assert code == 1 and doc["refused_by"] == "card" and hub.commit_requests == []
    assert (d / "README.md").read_text() == card  # left as it was


def test_the_card_diff_is_capped(hub: FakeHub, ckpts: dict[str, Path], dest: str, tmp_path: Path) -> None:
    lines = "".join(f"line {i}\n" for i in range(3000))
    d = pushable(ckpts, tmp_path, card=f"---\nlicense: mit\n---\n{lines}")
    code, doc = run_json("push", str(d), dest, "--token", "hf_granted", "--dry-run")
    assert code == 0
    lines = doc["card_diff"].splitlines()
    assert len(lines) <= 401 and "more diff line(s) not shown" in lines[-1]


# -- push: every Hub call under the timeout ---------------------------------------------------------------


@pytest.mark.parametrize(
    "endpoint, dry_run",
    [
        ("/tree/", True),
        ("org/dest/resolve/", True),
        ("/preupload/", False),
        ("/validate-yaml", False),
        ("/commit/", False),
    ],
)
def test_a_stalled_hub_endpoint_ends_in_one_typed_error(
    hub: FakeHub,
    ckpts: dict[str, Path],
    dest: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    endpoint: str,
    dry_run: bool,
) -> None:
    monkeypatch.setenv("DFLASH2_CKPT_HUB_TIMEOUT", "1")
    monkeypatch.setenv("DFLASH2_CKPT_HUB_DEADLINE", "2")
    monkeypatch.setenv("DFLASH2_CKPT_HUB_BACKOFF", "0.1")
    d = pushable(ckpts, tmp_path, card="---\nlicense: mit\n---\n# drafter\n")
    hub.inject("stall", contains=endpoint, times=100)
    started = time.monotonic()
    code, out = run("push", str(d), dest, "--token", "hf_granted", *(["--dry-run"] if dry_run else []))
    took = time.monotonic() - started
    assert code == 3 and "cannot reach" in out and "Traceback" not in out, out
    assert took < 30, f"{took:.0f} s"  # unbounded, it hung for minutes
    assert hub.commit_requests == [] or endpoint == "/commit/"


def test_a_card_with_a_few_aliases_is_read(
    hub: FakeHub, ckpts: dict[str, Path], dest: str, tmp_path: Path
) -> None:
    card = "---\nlicense: &l mit\ntags: [a, b]\nextra:\n  license: *l\n---\n# x\n"
    d = pushable(ckpts, tmp_path, card=card)
    code, doc = run_json("push", str(d), dest, "--token", "hf_granted", "--dry-run")
    assert code == 0 and doc["card"]["metadata"]["license"] == "mit", doc
    assert "DF645" not in [f["code"] for f in doc["card"]["findings"]]


def test_a_stalled_repo_creation_ends_in_one_typed_error(
    hub: FakeHub, ckpts: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DFLASH2_CKPT_HUB_TIMEOUT", "1")
    monkeypatch.setenv("DFLASH2_CKPT_HUB_DEADLINE", "2")
    monkeypatch.setenv("DFLASH2_CKPT_HUB_BACKOFF", "0.1")
    hub.inject("stall", contains="/api/repos/create", times=100)
    started = time.monotonic()
    code, out = run("push", str(pushable(ckpts, tmp_path)), "org/new", "--token", "hf_granted")
    assert code == 3 and "cannot reach" in out and "Traceback" not in out, out
    assert time.monotonic() - started < 30
