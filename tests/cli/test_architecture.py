"""The shape of the package: layers that import only downwards, no import cycle, click and cli/ only under
cli/, no format branches in commands."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from conftest import ROOT

PKG = ROOT / "dflash2_ckpt"


def _module(path: Path, root: Path = ROOT) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _resolve(mod: str, is_pkg: bool, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    base = mod.split(".") if is_pkg else mod.split(".")[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def import_graph(pkg: Path = PKG) -> dict[str, set[str]]:
    """module -> the package modules it imports, every import counted: at any depth (lazy imports inside
    functions) and under `if TYPE_CHECKING:` (an annotation that names a module depends on it too)."""
    files = {_module(p, pkg.parent): p for p in pkg.rglob("*.py")}
    graph: dict[str, set[str]] = {m: set() for m in files}
    for mod, path in files.items():
        is_pkg = path.name == "__init__.py"
        tree = ast.parse(path.read_text(), str(path))
        for node in ast.walk(tree):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = _resolve(mod, is_pkg, node)
                # `from pkg import sub` needs pkg.sub (its parent is initialised anyway); `from pkg import name` needs pkg
                names = [f"{base}.{a.name}" if f"{base}.{a.name}" in files else base for a in node.names]
            for n in names:
                while n and n not in files:  # `from .x import y` where y is a name, not a module
                    n = n.rpartition(".")[0]
                if n and n != mod and n.startswith("dflash2_ckpt"):
                    graph[mod].add(n)
    return graph


def read_layers(doc: Path = ROOT / "docs" / "architecture.md") -> tuple[tuple[str, ...], ...]:
    """The layers, lowest first, as docs/architecture.md's table lists them (between its two markers): a
    module may import its own layer and the layers below it, never one above. Every import counts (inside
    functions, under TYPE_CHECKING). Names are top-level modules or packages."""
    text = doc.read_text(encoding="utf-8")
    table = text[text.index("<!-- layers: begin -->") : text.index("<!-- layers: end -->")]
    rows = [line.split("|")[2] for line in table.splitlines() if line.startswith("| ") and "`" in line]
    return tuple(tuple(re.findall(r"`([\w_]+)`", cells)) for cells in rows)


LAYERS = read_layers()


def test_the_documented_layers_are_the_package_layout() -> None:
    """The order the docs give, and every name in it a real module or package of the package."""
    assert [names[0] for names in LAYERS[:3]] == ["errors", "sources", "formats"]
    assert LAYERS[-3:-1] == (("cli",), ("dev",)) and LAYERS.index(("usecases",)) < LAYERS.index(("report",))
    for name in (n for names in LAYERS for n in names):
        assert (PKG / f"{name}.py").is_file() or (PKG / name / "__init__.py").is_file(), name


def test_read_layers_reads_the_table_between_the_markers(tmp_path: Path) -> None:
    doc = tmp_path / "a.md"
    doc.write_text(
        "| x | `no` | before |\n<!-- layers: begin -->\n| layer | modules | what |\n"
        "|---|---|---|\n| ground | `errors`, `codes` | a `b`-free note |\n| top | `cli` | |\n"
        "<!-- layers: end -->\n"
    )
    assert read_layers(doc) == (("errors", "codes"), ("cli",))


def layer_of(module: str) -> int:
    parts = module.split(".")
    top = parts[1] if len(parts) > 1 else "__init__"
    for i, names in enumerate(LAYERS):
        if top in names:
            return i
    raise AssertionError(f"{module} is in no layer: add its package to LAYERS")


def test_the_package_root_holds_the_ground_the_api_and_the_layer_packages() -> None:
    """Beside the layer packages: the ground and the public API (__init__.py, the one module callers import);
    development aids live in dev/ and the tests' own in tests/_kit. No old-path shims: no page teaches one."""
    assert {p.stem for p in PKG.glob("*.py")} == {
        "__init__",
        "__main__",
        "errors",
        "codes",
        "findings",
        "version",
        "threads",
    }
    docs = (ROOT / "README.md").read_text() + "".join(p.read_text() for p in (ROOT / "docs").glob("*.md"))
    for old in ("compat", "gate"):
        assert f"dflash2_ckpt.{old} import" not in docs


def test_every_module_is_in_a_layer() -> None:
    for module in import_graph():
        layer_of(module)


def test_layers_import_only_downwards() -> None:
    upward = sorted(
        f"{m} -> {d}" for m, deps in import_graph().items() for d in deps if layer_of(d) > layer_of(m)
    )
    assert upward == []


def test_the_graph_counts_lazy_and_typing_imports(tmp_path: Path) -> None:
    pkg = tmp_path / "dflash2_ckpt"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "b.py").write_text("")
    (pkg / "c.py").write_text("")
    (pkg / "a.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .b import X\n"
        "def f():\n    from . import c\n"
    )
    assert import_graph(pkg)["dflash2_ckpt.a"] == {"dflash2_ckpt.b", "dflash2_ckpt.c"}


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(n: str) -> list[str] | None:
        state[n] = 1
        stack.append(n)
        for m in sorted(graph.get(n, ())):
            if state.get(m) == 1:
                return stack[stack.index(m) :] + [m]
            if m not in state and (c := visit(m)):
                return c
        stack.pop()
        state[n] = 2
        return None

    for n in sorted(graph):
        if n not in state and (c := visit(n)):
            return c
    return None


def test_find_cycle_finds_one() -> None:
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": set()}) is None


def test_no_import_cycle() -> None:
    cycle = find_cycle(import_graph())
    assert cycle is None, " -> ".join(cycle or [])


def test_nothing_outside_cli_imports_click_or_cli() -> None:
    graph = import_graph()
    offenders = [
        m
        for m, deps in graph.items()
        if not m.startswith("dflash2_ckpt.cli")
        and m != "dflash2_ckpt.__main__"
        and any(d.startswith("dflash2_ckpt.cli") for d in deps)
    ]
    for path in PKG.rglob("*.py"):
        if "cli" in path.relative_to(PKG).parts:
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            mods = (
                [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else [node.module or ""]
                if isinstance(node, ast.ImportFrom)
                else []
            )
            if any(m == "click" or m.startswith("click.") for m in mods):
                offenders.append(_module(path))
    assert offenders == []


def test_every_command_is_one_module_with_one_command() -> None:
    import importlib

    import click

    from dflash2_ckpt.cli import COMMANDS, main

    assert sorted(main.list_commands(None)) == sorted(COMMANDS)  # type: ignore[arg-type]
    for name in COMMANDS:
        assert isinstance(importlib.import_module(f"dflash2_ckpt.cli.{name}").command, click.Command)


def test_command_bodies_do_not_branch_on_the_format() -> None:
    for path in (PKG / "cli").glob("*.py"):
        assert 'fmt == "' not in path.read_text(), path.name
