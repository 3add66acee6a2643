"""`dflash2-ckpt accept DRAFTER --target MODEL`: a thin click shell over dflash2_ckpt.accept.

torch and transformers load only inside the body.
"""

from __future__ import annotations

import contextlib
import math
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING

import click

from ..accept import accept, require_accept_deps
from ..errors import Dflash2Error, UsageError
from .completion import complete_path
from .errors import guarded
from .options import configured, emit, hub_options, open_source, outputs_option, strict_option, threads_option
from .smoke import parse_size

if TYPE_CHECKING:
    from ..accept.run import Progress

ACCEPT_FORMATS = ("text", "json", "sarif", "github", "markdown", "html")


def _tau(value: float | None) -> str:
    return "-" if value is None or math.isnan(value) else f"{value:.2f}"


def _eta(seconds: float) -> str:
    s = round(seconds)
    return (
        f"{s} s"
        if s < 60
        else f"{s // 60} min {s % 60:02d} s"
        if s < 3600
        else f"{s // 3600} h {s % 3600 // 60:02d} min"
    )


def progress_line(
    done: int, total: int, label: str, tau: float | None, running: float | None, elapsed: float
) -> str:
    """One prompt's line for a log: `[3/10] prompt 3: τ 4.12 (running 4.30), ETA 12 s`; the ETA is the mean
    time per prompt so far times the prompts left."""
    from ..report.safe import printable  # lazy: report.safe loads only on this path

    eta = _eta(elapsed / done * (total - done)) if done else "-"
    return f"[{done}/{total}] {printable(label)[-60:]}: τ {_tau(tau)} (running {_tau(running)}), ETA {eta}"


@contextlib.contextmanager
def _progress() -> Iterator[Progress]:
    """Where a long run is, on stderr (cli/progress.py): the bar shows the running τ and the ETA on a terminal;
    off one, one plain line per prompt (CI logs, pipes), which a log keeps."""
    from .progress import progress  # lazy: cli.progress loads only on this path

    started = time.monotonic()
    taus: list[float | None] = [None, None]

    def plain(done: int, total: int | None, label: str, note: str) -> str:
        nonlocal started
        if done == 0:
            started = time.monotonic()  # the models are loaded: time the prompts only
            return f"accept: {total} prompt{'s' if total != 1 else ''}"
        return progress_line(done, total or done, label, taus[0], taus[1], time.monotonic() - started)

    with progress("accept", plain) as update:

        def step(done: int, total: int, label: str, tau: float | None, running: float | None) -> None:
            taus[:] = [tau, running]
            update(done, total, label, f"τ {_tau(running)}")

        yield step


def _expect(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    from ..accept.checks import parse_expect  # lazy: accept.checks loads only on this path

    try:
        parse_expect(value)
    except Dflash2Error as e:
        raise click.BadParameter(str(e)) from None
    return value


@click.command("accept", short_help="Measure acceptance length with a real target model")
@click.argument("drafter", shell_complete=complete_path)
@click.option(
    "--target",
    required=True,
    help="Target model: a transformers directory or a Hub repo id (org/name[@rev]).",
)
@click.option(
    "--prompts",
    type=click.Path(dir_okay=False),
    default=None,
    help='JSONL of {"prompt": ...} or {"messages": [...]} (default: the target\'s prompts.jsonl, '
    "else built-in).",
)
@click.option("--max-new-tokens", type=click.IntRange(min=1), default=64, show_default=True)
@click.option(
    "--block-size", type=click.IntRange(min=2), default=None, help="Block length B (default: the drafter's)."
)
@click.option(
    "--expect",
    default=None,
    callback=_expect,
    help="Published mean acceptance length TAU or TAU±TOL (e.g. 4.8±0.3, 4.8+-5%).",
)
@click.option("--limit", type=click.IntRange(min=1), default=None, help="Use only the first N prompts.")
@click.option("--device", default=None, help="cuda, cuda:1 or cpu (default: cuda if available).")
@click.option(
    "--kernels",
    type=click.Choice(["torch", "triton"]),
    default=None,
    help="Drafter conv and walk kernels (default: triton on CUDA, torch on the CPU).",
)
@click.option("--target-revision", default=None, help="Revision of a Hub target (or org/name@rev).")
@click.option(
    "--max-memory",
    "max_memory",
    default=None,
    metavar="SIZE",
    help="Memory the pair may take, e.g. 16G (default: half the RAM, or 90% of the GPU's); refused "
    "before loading above it.",
)
@click.option(
    "--engine",
    type=click.Choice(["reference", "llama.cpp", "transformers", "vllm"]),
    default="reference",
    show_default=True,
    help="Where the drafter runs: this toolkit's reference loop, llama.cpp's llama-server "
    "(TARGET is then a GGUF, DRAFTER a GGUF or an HF drafter converted first), or transformers' "
    "DFlash assisted generation (a DFlash v1 drafter in the assistant dialect), or vLLM "
    "(its own spec-decode counters; TARGET and DRAFTER HF directories), compared with the "
    "reference loop.",
)
@click.option(
    "--llama-server",
    "llama_server",
    default=None,
    help="The llama-server binary (default: $DFLASH2_CKPT_LLAMA_SERVER, then PATH).",
)
@click.option(
    "--vllm-python",
    "vllm_python",
    default=None,
    help="With --engine vllm: the python of a vLLM install (default: $DFLASH2_CKPT_VLLM_PYTHON, then "
    "the one scripts/vllm_cpu.py installs).",
)
@click.option(
    "--server",
    default=None,
    metavar="URL",
    help="With --engine vllm: a running `vllm serve` with a DFlash speculative config; τ from its "
    "Prometheus /metrics spec-decode counters.",
)
@click.option(
    "--hf-target",
    "hf_target",
    default=None,
    help="With --engine llama.cpp: the HF target directory; its tokenizer encodes the prompts and "
    "the reference loop runs on the same prompts for tau_engine / tau_reference.",
)
@click.option(
    "--hf-drafter",
    "hf_drafter",
    default=None,
    help="With --engine llama.cpp and a GGUF DRAFTER: its HF checkpoint, for the reference comparison.",
)
@click.option(
    "--batch",
    type=click.IntRange(min=1),
    default=1,
    show_default=True,
    help="Prompts decoded together, one target forward per step for all of them (reference loop).",
)
@threads_option
@click.option(
    "--format",
    "fmt",
    type=click.Choice(ACCEPT_FORMATS),
    default="text",
    show_default=True,
    help="markdown: a card-ready τ table with the per-position chart (for push --accept-table); "
    "html: a page with the chart; json, sarif, github as everywhere.",
)
@outputs_option(ACCEPT_FORMATS)
@strict_option
@hub_options
@guarded
@configured("drafter")
def command(
    drafter: str,
    target: str,
    prompts: str | None,
    max_new_tokens: int,
    block_size: int | None,
    expect: str | None,
    limit: int | None,
    device: str | None,
    kernels: str | None,
    target_revision: str | None,
    max_memory: str | None,
    engine: str,
    llama_server: str | None,
    vllm_python: str | None,
    server: str | None,
    hf_target: str | None,
    hf_drafter: str | None,
    batch: int,
    threads: int | None,
    fmt: str,
    strict: bool,
    revision: str | None,
    subfolder: str | None,
    token: str | None,
    outputs: tuple[tuple[str, str], ...] = (),
) -> int:
    """Speculative decoding of TARGET with DRAFTER: mean acceptance length, losslessness, speed."""

    if (vllm_python or server) and engine != "vllm":
        raise UsageError("--vllm-python and --server apply to --engine vllm only")
    if engine == "vllm":
        if llama_server or hf_target or hf_drafter or kernels or block_size or batch != 1:
            raise UsageError(
                "--llama-server, --hf-target, --hf-drafter, --kernels, --block-size and --batch do "
                "not apply to --engine vllm (it drafts the drafter's own block with its own code)"
            )

        require_accept_deps()
        from ..accept.engine_vllm import run_vllm_accept  # lazy: accept.engine_vllm loads only on this path

        return emit(
            run_vllm_accept(
                drafter,
                target,
                prompts=prompts,
                max_new_tokens=max_new_tokens,
                expect=expect,
                limit=limit,
                vllm_python=vllm_python,
                server=server,
                device=device,
            ),
            fmt,
            strict,
            outputs,
        )
    if engine == "llama.cpp":
        if batch != 1:
            raise UsageError(
                "--batch applies to the reference loop (--engine reference); llama-server batches "
                "by its own slots"
            )
        import tempfile  # lazy: tempfile only when a file is written (tests/cli/test_start.py)
        from pathlib import Path  # lazy: pathlib loads only on this path

        from ..accept.engine import run_engine_accept  # lazy: accept.engine loads only on this path

        with tempfile.TemporaryDirectory(prefix="dflash2-accept-gguf-") as tmp:
            gguf, source = drafter, None
            if not drafter.endswith(".gguf"):  # an HF drafter: this toolkit's converter, the target's vocab
                from ..convert.to_gguf import convert_to_gguf  # lazy: convert.to_gguf loads only on this path

                gguf, source = str(Path(tmp) / "drafter.gguf"), drafter
                convert_to_gguf(drafter, gguf, target=None, tokenizer_from=target)
            return emit(
                run_engine_accept(
                    gguf,
                    target,
                    prompts=prompts,
                    max_new_tokens=max_new_tokens,
                    expect=expect,
                    limit=limit,
                    llama_server=llama_server,
                    hf_drafter=hf_drafter,
                    hf_target=hf_target,
                    device=device,
                    converted_from=source,
                ),
                fmt,
                strict,
                outputs,
            )
    if engine == "transformers":
        if llama_server or hf_target or hf_drafter or kernels or block_size:
            raise UsageError(
                "--llama-server, --hf-target, --hf-drafter, --kernels and --block-size do not apply "
                "to --engine transformers (it drafts the drafter's own block with its own code)"
            )

        require_accept_deps()
        # lazy: accept.engine_transformers loads only on this path
        from ..accept.engine_transformers import run_transformers_accept

        return emit(
            run_transformers_accept(
                open_source(drafter, revision, token, subfolder),
                target,
                prompts=prompts,
                max_new_tokens=max_new_tokens,
                expect=expect,
                limit=limit,
                device=device,
                revision=target_revision,
                token=token,
                max_memory=parse_size(max_memory),
            ),
            fmt,
            strict,
            outputs,
        )
    if llama_server or hf_target or hf_drafter:
        raise UsageError("--llama-server, --hf-target and --hf-drafter apply to --engine llama.cpp only")

    require_accept_deps()  # say "install the extra" before touching the sources
    with _progress() as progress:
        report = accept(
            open_source(drafter, revision, token, subfolder),
            target,
            prompts=prompts,
            max_new_tokens=max_new_tokens,
            block_size=block_size,
            expect=expect,
            device=device,
            kernels=kernels,
            limit=limit,
            revision=target_revision,
            token=token,
            max_memory=parse_size(max_memory),
            batch=batch,
            threads=threads,
            progress=progress,
        )
    return emit(report, fmt, strict, outputs)


accept_command = command  # the name the accept tests import
