"""`dflash2-ckpt smoke PATH`: a thin click shell over run_smoke. torch loads only inside the body."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator

import click

from .completion import complete_path
from .errors import guarded
from .options import (
    configured,
    emit,
    format_option,
    hub_options,
    open_source,
    open_target,
    strict_option,
    threads_option,
)

_UNITS = {"": 1, "B": 1, "K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40}


def parse_size(text: str | None) -> int | None:
    """ "16G", "800M", "1.5GiB", "123456" -> bytes (binary units)."""
    if text is None:
        return None
    t = text.strip().upper().removesuffix("IB").removesuffix("B")
    unit = t[-1:] if t[-1:] in _UNITS and not t[-1:].isdigit() else ""
    try:
        value = float(t[: len(t) - len(unit)])
    except ValueError:
        raise click.BadParameter(
            f"{text!r} is not a size like 16G or 800M", param_hint="--max-memory"
        ) from None
    if value <= 0:
        raise click.BadParameter("must be positive", param_hint="--max-memory")
    return int(value * _UNITS[unit])


@contextlib.contextmanager
def _progress(fmt: str) -> Iterator[Callable[[str, int, int], None] | None]:
    """The stages on stderr (cli/progress.py): a bar on a terminal, a line per stage off one; the run's
    estimate (a call with total 0) is shown beside every stage."""
    from .progress import progress  # lazy: cli.progress loads only on this path

    note = ""

    def plain(done: int, total: int | None, label: str, extra: str) -> str | None:
        return f"smoke: {done}/{total} {label}" + (f" ({extra})" if extra else "") if total else None

    with progress("smoke", plain, fmt=fmt) as update:

        def stage(name: str, done: int, total: int) -> None:
            nonlocal note
            if total == 0:  # the estimate, shown beside every stage
                note = name
                update(0, None, "loading", note)
                return
            update(done, total, name, note)

        yield stage


@click.command("smoke", short_help="Run the drafter's forward and selector walk to prove it drafts")
@click.argument("path", shell_complete=complete_path)
@click.option(
    "--target",
    type=click.Path(),
    default=None,
    help="Target model directory: its embed_tokens / lm_head are borrowed (else random).",
)
@click.option(
    "--hidden-states",
    type=click.Path(dir_okay=False),
    default=None,
    help="safetensors file with `hidden_states` [n_ctx, n_t*H_t] (optional `anchor_ids`).",
)
@click.option(
    "--block-size", type=click.IntRange(min=2), default=None, help="Block length B (default: the config's)."
)
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--device", default=None, help="cuda, cuda:1 or cpu (default: cuda if available).")
@click.option(
    "--requests",
    type=click.IntRange(min=1),
    default=2,
    show_default=True,
    help="Smoke inputs drafted side by side.",
)
@click.option(
    "--layers",
    type=click.IntRange(min=1),
    default=None,
    help="Run only the first N draft layers (a cheaper check of a large drafter).",
)
@click.option(
    "--max-memory",
    "max_memory",
    default=None,
    metavar="SIZE",
    help="Refuse to start above this estimate, e.g. 16G or 800M (default: half the RAM on a CPU, "
    "90%% of the GPU's memory).",
)
@threads_option
@format_option
@strict_option
@hub_options
@guarded
@configured("path")
def command(
    path: str,
    target: str | None,
    hidden_states: str | None,
    block_size: int | None,
    seed: int,
    device: str | None,
    requests: int,
    layers: int | None,
    max_memory: str | None,
    threads: int | None,
    fmt: str,
    strict: bool,
    revision: str | None,
    subfolder: str | None,
    token: str | None,
) -> int:
    """Run the drafter's full conv and a Triton selector walk to prove its tensors draft."""
    from ..smoke import require_smoke_deps, run_smoke  # lazy: smoke loads only on this path

    require_smoke_deps()  # say "install the extra" before touching the source
    budget = parse_size(max_memory)
    with _progress(fmt) as progress:
        report = run_smoke(
            open_source(path, revision, token, subfolder),
            target=open_target(target, token),
            hidden_states=hidden_states,
            block_size=block_size,
            seed=seed,
            device=device,
            requests=requests,
            layers=layers,
            max_memory=budget,
            threads=threads,
            progress=progress,
        )
    return emit(report, fmt, strict)


smoke_command = command  # the name the smoke tests import
