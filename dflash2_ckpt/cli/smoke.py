"""`dflash2-ckpt smoke PATH`: a thin click shell over run_smoke. torch loads only inside the body."""
from __future__ import annotations

import click

from .errors import guarded
from .options import emit, format_option, hub_options, open_source, open_target, strict_option


@click.command("smoke")
@click.argument("path")
@click.option("--target", type=click.Path(), default=None,
              help="Target model directory: its embed_tokens / lm_head are borrowed (else random).")
@click.option("--hidden-states", type=click.Path(dir_okay=False), default=None,
              help="safetensors file with `hidden_states` [n_ctx, n_t*H_t] (optional `anchor_ids`).")
@click.option("--block-size", type=click.IntRange(min=2), default=None, help="Block length B (default: the config's).")
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--device", default=None, help="cuda, cuda:1 or cpu (default: cuda if available).")
@format_option
@strict_option
@hub_options
@guarded
def command(path: str, target: str | None, hidden_states: str | None, block_size: int | None, seed: int,
            device: str | None, fmt: str, strict: bool, revision: str | None, subfolder: str | None,
            token: str | None) -> int:
    """Run the drafter's full conv and a Triton selector walk to prove its tensors draft."""
    from ..smoke import require_smoke_deps, run_smoke
    require_smoke_deps()             # say "install the extra" before touching the source
    report = run_smoke(open_source(path, revision, token, subfolder), target=open_target(target, token),
                       hidden_states=hidden_states, block_size=block_size, seed=seed, device=device)
    return emit(report, fmt, strict)


smoke_command = command      # the name the smoke tests import
