"""The write guard itself (sources/safe_write.py): what it refuses, how it names temporary files, and that
a link planted between the check and the rename is refused too."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from dflash2_ckpt.audit.cache import AuditCache
from dflash2_ckpt.errors import UnsafeOutputError
from dflash2_ckpt.sources import safe_write
from dflash2_ckpt.sources.safe_write import check, inputs, temp_beside, write_text


def test_a_new_file_is_written_and_an_existing_one_replaced_keeping_its_mode(tmp_path: Path) -> None:
    dest = tmp_path / "out.json"
    write_text(dest, "one")
    assert dest.read_text() == "one"
    dest.chmod(0o640)
    write_text(dest, "two")
    assert dest.read_text() == "two" and dest.stat().st_mode & 0o777 == 0o640
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.json"]


@pytest.mark.parametrize("kind", ["symlink", "hardlink", "directory", "fifo"])
def test_refused_destinations(tmp_path: Path, kind: str) -> None:
    victim = tmp_path / "victim"
    victim.write_text("keep")
    dest = tmp_path / "dest"
    {
        "symlink": lambda: dest.symlink_to(victim),
        "hardlink": lambda: os.link(victim, dest),
        "directory": dest.mkdir,
        "fifo": lambda: os.mkfifo(dest),
    }[kind]()
    with pytest.raises(UnsafeOutputError) as e:
        write_text(dest, "x")
    assert e.value.path == str(dest) and victim.read_text() == "keep"
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]


def test_inputs_protect_files_by_identity_and_existing_files_under_directories(tmp_path: Path) -> None:
    src = tmp_path / "src"
    src.mkdir()
    (src / "config.json").write_text("{}")
    (src / "notes.md").write_text("n")
    single = tmp_path / "one.bin"
    single.write_text("1")
    guard = inputs([src, single, "org/not-a-path", None])
    for p in (src / "config.json", src / "notes.md", single, src):
        with pytest.raises(UnsafeOutputError):
            check(p, reading=guard)
    assert check(src / "new.json", reading=guard) == src / "new.json"  # a new file beside: harmless
    assert check(tmp_path / "elsewhere.json", reading=guard) == tmp_path / "elsewhere.json"


def test_temporary_files_are_private_new_and_never_follow_a_planted_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    dest = tmp_path / "README.md"
    victim = tmp_path / "config.json"
    victim.write_text("{}")
    fixed = "0" * 12
    planted = tmp_path / f".README.md{safe_write.TEMP_TAG}{fixed}.tmp"
    planted.symlink_to(victim)
    names = iter([bytes.fromhex(fixed), bytes.fromhex("1" * 12)])
    monkeypatch.setattr(safe_write.os, "urandom", lambda n: next(names))
    fd, tmp = temp_beside(dest)  # the planted name exists: O_EXCL skips it, the next name is taken
    os.close(fd)
    assert tmp.name == f".README.md{safe_write.TEMP_TAG}{'1' * 12}.tmp"
    assert tmp.stat().st_mode & 0o777 == 0o600 and victim.read_text() == "{}"


def test_a_link_planted_after_the_check_is_refused_at_the_rename(tmp_path: Path) -> None:
    dest = tmp_path / "out.json"
    victim = tmp_path / "victim"
    victim.write_text("keep")

    def fill(fh: object) -> None:
        dest.symlink_to(victim)  # a racing writer plants the link while the content is written

    with pytest.raises(UnsafeOutputError):
        safe_write.write_with(dest, fill)  # type: ignore[arg-type]
    assert victim.read_text() == "keep" and dest.is_symlink()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]


def test_the_audit_cache_never_writes_through_a_planted_link(tmp_path: Path) -> None:
    cache = AuditCache(tmp_path / "cache")
    key = "ab" + "0" * 62
    (tmp_path / "cache" / "ab").mkdir(parents=True)
    victim = tmp_path / "victim"
    victim.write_text("keep")
    (tmp_path / "cache" / "ab" / f"{key}.json").symlink_to(victim)
    cache.put(key, {"row": 1})
    assert victim.read_text() == "keep"
    other = "cd" + "0" * 62
    cache.put(other, {"row": 2})
    assert cache.get(other) == {"row": 2}
