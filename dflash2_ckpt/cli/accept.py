"""`dflash2-ckpt accept DRAFTER --target MODEL`: a thin click shell over dflash2_ckpt.accept.

torch and transformers load only inside the body. With --format json, stdout is one JSON document
in every outcome (an error too, as {"error": {...}}).
"""
from __future__ import annotations

import json
import os
import sys
import traceback

import click

from ..errors import Dflash2Error

EXIT_OK, EXIT_FINDINGS, EXIT_CANNOT_RUN = 0, 1, 3


def _expect(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    from ..accept.checks import parse_expect
    try:
        parse_expect(value)
    except Dflash2Error as e:
        raise click.BadParameter(str(e)) from None
    return value


@click.command("accept")
@click.argument("drafter")
@click.option("--target", required=True, help="Target model: a transformers directory or a Hub repo id (org/name[@rev]).")
@click.option("--prompts", type=click.Path(dir_okay=False), default=None,
              help='JSONL of {"prompt": ...} or {"messages": [...]} (default: the target\'s prompts.jsonl, else built-in).')
@click.option("--max-new-tokens", type=click.IntRange(min=1), default=64, show_default=True)
@click.option("--block-size", type=click.IntRange(min=2), default=None, help="Block length B (default: the drafter's).")
@click.option("--expect", default=None, callback=_expect, help="Published mean acceptance length TAU or TAU±TOL (e.g. 4.8±0.3, 4.8+-5%).")
@click.option("--limit", type=click.IntRange(min=1), default=None, help="Use only the first N prompts.")
@click.option("--device", default=None, help="cuda, cuda:1 or cpu (default: cuda if available).")
@click.option("--kernels", type=click.Choice(["torch", "triton"]), default=None,
              help="Drafter conv and walk kernels (default: triton on CUDA, torch on the CPU).")
@click.option("--revision", default=None, help="Revision of a Hub target.")
@click.option("--token", default=None, envvar="HF_TOKEN", show_envvar=True, help="Hugging Face token.")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@click.option("--strict", is_flag=True, help="Fail on warnings too.")
def accept_command(drafter: str, target: str, prompts: str | None, max_new_tokens: int, block_size: int | None,
                   expect: str | None, limit: int | None, device: str | None, kernels: str | None,
                   revision: str | None, token: str | None, fmt: str, strict: bool) -> None:
    """Speculative decoding of TARGET with DRAFTER: mean acceptance length, losslessness, speed."""
    from ..accept import accept, require_accept_deps

    try:
        from . import open_source   # local path or Hub repo id, like every other command
        require_accept_deps()
        report = accept(open_source(drafter), target, prompts=prompts, max_new_tokens=max_new_tokens,
                        block_size=block_size, expect=expect, device=device, kernels=kernels, limit=limit,
                        revision=revision, token=token)
    except Dflash2Error as e:
        if os.environ.get("DFLASH2_CKPT_DEBUG"):
            traceback.print_exc()
        if fmt == "json":
            click.echo(json.dumps({"error": {"type": type(e).__name__, "message": str(e), "hint": e.hint}}))
        else:
            click.echo(f"error: {e}", err=True)
            if e.hint:
                click.echo(f"  hint: {e.hint}", err=True)
        sys.exit(EXIT_CANNOT_RUN)
    click.echo(json.dumps(report.to_json(), indent=2) if fmt == "json" else report.to_text())
    sys.exit(EXIT_FINDINGS if report.failed(strict) else EXIT_OK)
