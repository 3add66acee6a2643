"""docs/ for the second reader: a page per command, linked from docs/commands.md, and no dead link in the
README or the docs (a finding-code link lands on that code's section)."""

from __future__ import annotations

import re
from pathlib import Path

import click

from conftest import ROOT
from dflash2_ckpt.cli import main

DOCS = ROOT / "docs"
LINK = re.compile(r"\]\(([^)\s]+)\)")


def page_of(command: str) -> str:
    return {"hook": "hooks"}.get(command, command) + ".md"


def test_every_command_has_its_page_linked_from_the_commands_page() -> None:
    commands = main.list_commands(click.Context(main))
    assert {
        "verify",
        "inspect",
        "compat",
        "convert",
        "diff",
        "smoke",
        "accept",
        "audit",
        "hook",
        "push",
        "config",
    } <= set(commands)
    index = (DOCS / "commands.md").read_text()
    for command in commands:
        page = DOCS / page_of(command)
        assert page.is_file(), f"{command} has no page docs/{page.name}"
        assert f"]({page.name})" in index, f"docs/commands.md does not link docs/{page.name}"
        assert f"dflash2-ckpt {command}" in page.read_text(), f"docs/{page.name} does not show the command"


def _links(path: Path) -> list[str]:
    text = re.sub(r"```.*?```", "", path.read_text(), flags=re.S)  # code blocks hold no links
    return [m for m in LINK.findall(text) if not m.startswith(("http://", "https://", "mailto:"))]


def anchors(path: Path) -> set[str]:
    """The fragment each heading gets on GitHub (lower case, spaces to dashes, punctuation dropped) and
    each explicit `<a id="...">`."""
    text = path.read_text()
    return {
        re.sub(r"[^\w\- ]", "", h).strip().lower().replace(" ", "-")
        for h in re.findall(r"^#+ (.+)$", text, flags=re.M)
    } | set(re.findall(r'<a id="([^"]+)">', text))


def test_no_dead_link_in_the_readme_or_the_docs() -> None:
    dead = []
    for path in [ROOT / "README.md", *sorted(DOCS.glob("*.md"))]:
        for link in _links(path):
            target, _, fragment = link.partition("#")
            file = (path.parent / target).resolve() if target else path
            if not file.exists():
                dead.append(f"{path.name}: {link}")
            elif fragment and file.suffix == ".md" and fragment not in anchors(file):
                dead.append(f"{path.name}: {link} (no such section)")
    assert dead == []


def test_a_code_link_lands_on_its_section() -> None:
    """docs/codes.md#df805 lands on the code (SARIF rules link there)."""
    from dflash2_ckpt.codes import all_codes

    assert {c.code.lower() for c in all_codes()} <= anchors(DOCS / "codes.md")
