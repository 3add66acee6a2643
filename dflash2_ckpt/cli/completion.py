"""Shell completion values (click's `shell_complete` callbacks): a checkpoint PATH completes as a path
(it may also be a Hub id, so it is not typed click.Path), `--engine` from the engine profiles,
`--select` / `--ignore` and `codes CODE` from the code registry."""

from __future__ import annotations

from click import Context, Parameter
from click.shell_completion import CompletionItem


def complete_path(ctx: Context, param: Parameter, incomplete: str) -> list[CompletionItem]:
    """Let the shell complete files and folders (a Hub id is typed out)."""
    return [CompletionItem(incomplete, type="file")]


def engine_refs() -> list[str]:
    """Each engine's name (its newest profile), then `engine@VERSION` at the first release of each profile."""
    from ..engines.registry import ENGINES, PROFILES  # lazy: engines.registry loads only on this path
    from ..engines.versions import show  # lazy: engines.versions loads only on this path

    refs = list(ENGINES)
    for p in PROFILES:
        first = p.versions.exact or p.versions.low
        if p.versions.scheme is not None and first is not None:
            refs.append(f"{p.engine}@{show(first, p.versions.scheme)}")
    return list(dict.fromkeys(refs))


def complete_engine(ctx: Context, param: Parameter, incomplete: str) -> list[CompletionItem]:
    return [CompletionItem(r) for r in engine_refs() if r.startswith(incomplete)]


def complete_code(ctx: Context, param: Parameter, incomplete: str) -> list[CompletionItem]:
    from ..codes import all_codes  # lazy: codes loads only on this path

    return [
        CompletionItem(c.code, help=c.summary) for c in all_codes() if c.code.startswith(incomplete.upper())
    ]


def complete_codes(ctx: Context, param: Parameter, incomplete: str) -> list[CompletionItem]:
    """A comma-separated list: the codes that continue its last item, each with the items before it."""
    head, _, last = incomplete.rpartition(",")
    prefix = f"{head}," if head else ""
    return [CompletionItem(prefix + item.value, help=item.help) for item in complete_code(ctx, param, last)]
