"""`dflash2-ckpt convert SRC -o DST --to nested|flat|gguf`: a thin shell over dflash2_ckpt.convert (and
convert.gguf for GGUF in either direction).

Exit codes: 0 converted (or planned, with --dry-run); 1 refused (the conversion cannot be exact, the
source has error findings not accepted, or the output failed verification), or a GGUF written with an
error finding of its own (reported, never called verified); 2 usage (no verifier
name or architectures when going flat without --target, DST exists without --force, DST inside SRC); 3 could not run.
"""

from __future__ import annotations

import os
import signal
import sys
from pathlib import PurePosixPath
from typing import Any

import click

from ..errors import ConversionUsageError, UsageError
from ..report import render
from .completion import complete_path
from .errors import EXIT_FINDINGS, EXIT_OK, guarded
from .options import OlderSpelling, format_option, parse_codes
from .progress import progress


@click.command("convert", short_help="Convert between the nested and flat dialects and GGUF")
@click.argument("src", shell_complete=complete_path)
@click.option(
    "-o",
    "--output-dir",
    "--output",
    "dst",
    cls=OlderSpelling,
    older="--output",
    required=True,
    metavar="DIR|FILE.gguf",
    help="Where the converted checkpoint goes: a directory, or FILE.gguf for --to gguf (written atomically).",
    note="convert's --output is now -o/--output-dir (--output names a report file in the other "
    "commands); --output still works here",
)
@click.option(
    "--to",
    "to",
    type=click.Choice(["nested", "flat", "gguf"]),
    required=True,
    help="Destination dialect; gguf writes one llama.cpp file. A .gguf SRC converts back to nested / flat.",
)
@click.option(
    "--outtype",
    type=click.Choice(["bf16", "f16", "f32", "q8_0"]),
    default=None,
    help="GGUF tensor type (default: the source's, exact); q8_0 keeps vectors and conv base kernels F32.",
)
@click.option(
    "--tokenizer-from",
    "tokenizer_from",
    type=click.Path(),
    default=None,
    help="Copy the tokenizer.ggml.* keys from this target GGUF instead of --target's tokenizer.json.",
)
@click.option(
    "--target",
    type=click.Path(),
    default=None,
    help="Target model directory (config.json): num_target_layers when going nested, the verifier "
    "when going flat; also checks that the drafter fits it.",
)
@click.option("--verifier-name", default=None, help="Verifier repo id written in speculators_config (flat).")
@click.option(
    "--verifier-arch",
    "verifier_archs",
    multiple=True,
    help="Verifier architecture class written in speculators_config (flat), when --target is not given.",
)
@click.option("--subfolder", default=None, help="The drafter's folder inside SRC (as verify --subfolder).")
@click.option("--dry-run", is_flag=True, help="Print the config diff and the tensor plan; write nothing.")
@click.option("--force", is_flag=True, help="Replace an existing DST, only after the new one verified.")
@click.option(
    "--accept-findings",
    default=None,
    help="Convert even though the source has these error codes or prefixes, comma-separated (e.g. DF201,DF3).",
)
@click.option(
    "--accept-changes",
    default=None,
    help="Convert even though an engine would build another drafter from the output: the fields "
    "(causal, window, taps, block_size, speculative_tokens, mask_token_id, vocab, v_scale, sinks, "
    "rope, norm_eps, tensors), optionally ENGINE:FIELD, comma-separated.",
)
@format_option
@guarded
def command(
    src: str,
    dst: str,
    to: str,
    outtype: str | None,
    tokenizer_from: str | None,
    target: str | None,
    verifier_name: str | None,
    verifier_archs: tuple[str, ...],
    subfolder: str | None,
    dry_run: bool,
    force: bool,
    accept_findings: str | None,
    accept_changes: str | None,
    fmt: str,
) -> int:
    """Convert a DFlash / DFlash2 checkpoint between the nested and flat (speculators) dialects and GGUF."""
    from ..convert import convert  # lazy: convert loads only on this path

    accept = parse_codes(accept_findings, "--accept-findings")
    changes = _changes(accept_changes)
    if subfolder:
        src = _inside(src, subfolder)
    _sigterm_unwinds()
    if to == "gguf" or src.endswith(".gguf"):
        from ..convert.gguf import convert_gguf  # lazy: convert.gguf loads only on this path

        gguf_report = convert_gguf(
            src,
            dst,
            to=to,
            target=target,
            verifier_name=verifier_name,
            outtype=outtype,
            tokenizer_from=tokenizer_from,
            dry_run=dry_run,
            force=force,
            accept_findings=accept,
            verifier_architectures=verifier_archs,
            accept_changes=changes,
        )
        render(gguf_report, fmt)
        # a written file whose own check found an error (a llama.cpp loader rule, DF907) exits as verify of
        # that file would: 1, and the report does not call it verified
        return EXIT_FINDINGS if gguf_report.failed() else EXIT_OK
    if outtype or tokenizer_from:
        raise ConversionUsageError("--outtype and --tokenizer-from apply to --to gguf only")
    with progress("convert", fmt=fmt) as update:
        # the ignore trails its argument's own line, where mypy reports it (also after `ruff format` splits it)
        report = convert(
            src,
            dst,
            to=to,  # type: ignore[arg-type]
            target=target,
            verifier_name=verifier_name,
            verifier_architectures=verifier_archs,
            dry_run=dry_run,
            force=force,
            accept_findings=accept,
            accept_changes=changes,
            progress=lambda i, n, shard: update(i, n, shard, ""),
        )
    render(report, fmt)
    return EXIT_OK


def _changes(value: str | None) -> tuple[str, ...]:
    from ..engines.meaning import accepted_fields  # lazy: engines.meaning loads only on this path

    names = [v.strip() for v in (value or "").split(",") if v.strip()]
    try:
        return accepted_fields(names)
    except ValueError as e:
        raise UsageError(
            str(e), hint="e.g. --accept-changes causal or --accept-changes vllm>=0.33:taps"
        ) from None


def _inside(src: str, subfolder: str) -> str:
    """SRC/SUBFOLDER, refused when the subfolder is absolute or climbs out of SRC."""

    parts = PurePosixPath(subfolder.replace("\\", "/")).parts
    if not parts or os.path.isabs(subfolder) or ".." in parts:
        raise UsageError(
            f"--subfolder {subfolder!r} must be a folder inside SRC", hint="e.g. --subfolder dflash"
        )
    return os.path.join(src, *parts)


def _sigterm_unwinds() -> None:
    """SIGTERM runs the cleanup in `finally` like Ctrl-C does (SIGKILL is handled by the next run)."""

    def handler(signum: int, frame: Any) -> None:
        sys.exit(128 + signum)

    try:
        signal.signal(signal.SIGTERM, handler)
    except ValueError:  # not the main thread (e.g. embedded); the default action stays
        pass
