"""`dflash2-ckpt smoke PATH`: a thin click shell over run_smoke. torch loads only inside the body."""
from __future__ import annotations

import json
import os
import sys
import traceback

import click

from ..errors import Dflash2Error

EXIT_OK, EXIT_FINDINGS, EXIT_CANNOT_RUN = 0, 1, 3


@click.command("smoke")
@click.argument("path")
@click.option("--target", type=click.Path(file_okay=False), default=None,
              help="Target model directory: its embed_tokens / lm_head are borrowed (else random).")
@click.option("--hidden-states", type=click.Path(dir_okay=False), default=None,
              help="safetensors file with `hidden_states` [n_ctx, n_t*H_t] (optional `anchor_ids`).")
@click.option("--block-size", type=click.IntRange(min=2), default=None, help="Block length B (default: the config's).")
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--device", default=None, help="cuda, cuda:1 or cpu (default: cuda if available).")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@click.option("--strict", is_flag=True, help="Fail on warnings too.")
def smoke_command(path: str, target: str | None, hidden_states: str | None, block_size: int | None,
                  seed: int, device: str | None, fmt: str, strict: bool) -> None:
    """Run the drafter's full conv and a Triton selector walk to prove its tensors draft."""
    from ..smoke import require_smoke_deps, run_smoke

    try:
        from . import open_source   # local path or Hub repo id, like every other command
        require_smoke_deps()             # say "install the extra" before touching the source
        report = run_smoke(open_source(path), target=target, hidden_states=hidden_states, block_size=block_size,
                           seed=seed, device=device)
    except Dflash2Error as e:
        if os.environ.get("DFLASH2_CKPT_DEBUG"):
            traceback.print_exc()
        click.echo(f"error: {e}", err=True)
        if e.hint:
            click.echo(f"  hint: {e.hint}", err=True)
        sys.exit(EXIT_CANNOT_RUN)
    if fmt == "json":
        click.echo(json.dumps(report.to_json(), indent=2))
    else:
        click.echo(report.to_text())
    sys.exit(EXIT_FINDINGS if report.failed(strict) else EXIT_OK)
