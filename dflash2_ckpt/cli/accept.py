"""`dflash2-ckpt accept DRAFTER --target MODEL`: a thin click shell over dflash2_ckpt.accept.

torch and transformers load only inside the body.
"""
from __future__ import annotations

import click

from ..errors import Dflash2Error
from .errors import guarded
from .options import emit, format_option, hub_options, open_source, strict_option


def _expect(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    from ..accept.checks import parse_expect
    try:
        parse_expect(value)
    except Dflash2Error as e:
        raise click.BadParameter(str(e)) from None
    return value


@click.command("accept")
@click.argument("drafter")
@click.option("--target", required=True,
              help="Target model: a transformers directory or a Hub repo id (org/name[@rev]).")
@click.option("--prompts", type=click.Path(dir_okay=False), default=None,
              help='JSONL of {"prompt": ...} or {"messages": [...]} (default: the target\'s prompts.jsonl, '
                   'else built-in).')
@click.option("--max-new-tokens", type=click.IntRange(min=1), default=64, show_default=True)
@click.option("--block-size", type=click.IntRange(min=2), default=None, help="Block length B (default: the drafter's).")
@click.option("--expect", default=None, callback=_expect,
              help="Published mean acceptance length TAU or TAU±TOL (e.g. 4.8±0.3, 4.8+-5%).")
@click.option("--limit", type=click.IntRange(min=1), default=None, help="Use only the first N prompts.")
@click.option("--device", default=None, help="cuda, cuda:1 or cpu (default: cuda if available).")
@click.option("--kernels", type=click.Choice(["torch", "triton"]), default=None,
              help="Drafter conv and walk kernels (default: triton on CUDA, torch on the CPU).")
@click.option("--target-revision", default=None, help="Revision of a Hub target (or org/name@rev).")
@click.option("--engine", type=click.Choice(["reference", "llama.cpp"]), default="reference", show_default=True,
              help="Where the drafter runs: this toolkit's reference loop, or llama.cpp's llama-server "
                   "(TARGET is then a GGUF, DRAFTER a GGUF or an HF drafter converted first).")
@click.option("--llama-server", "llama_server", default=None,
              help="The llama-server binary (default: $DFLASH2_CKPT_LLAMA_SERVER, then PATH).")
@click.option("--hf-target", "hf_target", default=None,
              help="With --engine llama.cpp: the HF target directory; its tokenizer encodes the prompts and "
                   "the reference loop runs on the same prompts for tau_engine / tau_reference.")
@click.option("--hf-drafter", "hf_drafter", default=None,
              help="With --engine llama.cpp and a GGUF DRAFTER: its HF checkpoint, for the reference comparison.")
@format_option
@strict_option
@hub_options
@guarded
def command(drafter: str, target: str, prompts: str | None, max_new_tokens: int, block_size: int | None,
            expect: str | None, limit: int | None, device: str | None, kernels: str | None,
            target_revision: str | None, engine: str, llama_server: str | None, hf_target: str | None,
            hf_drafter: str | None, fmt: str, strict: bool, revision: str | None, subfolder: str | None,
            token: str | None) -> int:
    """Speculative decoding of TARGET with DRAFTER: mean acceptance length, losslessness, speed."""
    if engine == "llama.cpp":
        import tempfile
        from pathlib import Path
        from ..accept.engine import run_engine_accept
        with tempfile.TemporaryDirectory(prefix="dflash2-accept-gguf-") as tmp:
            gguf, source = drafter, None
            if not drafter.endswith(".gguf"):       # an HF drafter: this toolkit's converter, the target's vocab
                from ..convert.to_gguf import convert_to_gguf
                gguf, source = str(Path(tmp) / "drafter.gguf"), drafter
                convert_to_gguf(drafter, gguf, target=None, tokenizer_from=target)
            return emit(run_engine_accept(gguf, target, prompts=prompts, max_new_tokens=max_new_tokens,
                                          expect=expect, limit=limit, llama_server=llama_server,
                                          hf_drafter=hf_drafter, hf_target=hf_target, device=device,
                                          converted_from=source), fmt, strict)
    if llama_server or hf_target or hf_drafter:
        from ..errors import UsageError
        raise UsageError("--llama-server, --hf-target and --hf-drafter apply to --engine llama.cpp only")
    from ..accept import accept, require_accept_deps
    require_accept_deps()            # say "install the extra" before touching the sources
    report = accept(open_source(drafter, revision, token, subfolder), target, prompts=prompts,
                    max_new_tokens=max_new_tokens, block_size=block_size, expect=expect, device=device,
                    kernels=kernels, limit=limit, revision=target_revision, token=token)
    return emit(report, fmt, strict)


accept_command = command      # the name the accept tests import
