"""`dflash2-ckpt diff DERIVED --reference SRC`: a derived checkpoint against its source, tensor by tensor.

Exit codes: 0 every tensor equal or within its scheme's rounding; 1 a tensor different or missing;
3 could not run (torch / compressed-tensors not installed, a side unreadable)."""

from __future__ import annotations

import json

import click

from ..errors import MissingDependencyError
from .completion import complete_path
from .errors import guarded
from .options import emit, format_option, open_source, output_option, threads_option
from .progress import progress


@click.command("diff", short_help="Compare a quantized or re-exported drafter with its source")
@click.argument("derived", shell_complete=complete_path)
@click.option("--reference", "-r", required=True, help="The source checkpoint (local path or Hub repo id).")
@click.option(
    "--receipt",
    type=click.Path(dir_okay=False),
    default=None,
    help="Write a JSON receipt: sha256 of every file on both sides and the per-tensor figures.",
)
@threads_option
@format_option
@output_option
@guarded
def command(
    derived: str,
    reference: str,
    receipt: str | None,
    threads: int | None,
    fmt: str,
    outputs: tuple[tuple[str, str], ...] = (),
) -> int:
    """Compare every tensor of DERIVED (quantized or re-exported) with the reference it was made from:
    equal, quantization-noise, different (random, zeroed, transposed, swapped), missing or extra."""

    try:
        from ..diff import (
            diff,  # torch (and compressed-tensors for some layouts) load when a tensor needs them
        )
    except ImportError as e:
        raise MissingDependencyError(
            f"diff needs torch and compressed-tensors ({e.name} is missing)",
            hint='pip install "dflash2-ckpt[diff]"',
        ) from e
    guard = None
    if receipt:  # judged before any tensor is read: a refused receipt costs nothing
        from ..report.write import files_read  # lazy: report.write loads only on this path

        # lazy: sources.safe_write loads only on this path
        from ..sources.safe_write import Inputs, check, inputs

        guard = inputs([derived, reference]) | Inputs(frozenset(files_read([derived, reference])))
        check(receipt, reading=guard, hint="write the receipt to a file outside both checkpoints")
    d, r = open_source(derived), open_source(reference)
    with progress("diff", fmt=fmt) as update:
        result = diff(d, r, threads=threads, progress=lambda i, n, name: update(i, n, name, ""))
    if receipt and guard is not None:
        from ..sources.safe_write import write_text  # lazy: sources.safe_write loads only on this path

        write_text(receipt, json.dumps(result.receipt(), indent=2) + "\n", reading=guard)
    return emit(result, fmt, outputs=outputs)
