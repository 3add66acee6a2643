"""accept inside transformers: τ from transformers' own DFlash assisted generation.

`target.generate(ids, assistant_model=drafter, speculation_type="dflash")` drafts with transformers'
DFlashTokenCandidateGenerator and the Muse-Glimmer assistant model. Each prompt runs once that way and
once as plain greedy `generate`, on the target and prompts the reference loop uses (accept's prompt
rows); the reference loop then runs on the same pair and the report gives the ratio of the two τ.

What is counted: after every target forward, assisted generation puts the tokens that forward
committed (the accepted drafts plus the target's own next token, after its end-of-sequence and length
crops) to the `streamer` it was given (transformers/generation/utils.py `_assisted_decoding`:
`streamer.put(valid_tokens.cpu())`; the prompt is put once before, `streamer.put(input_ids.cpu())`).
The first forward is the prefill (the DFlash candidate generator drafts nothing before the target's
hidden states exist: `if is_first_iteration: return input_ids, None`), so every later put is one
verification step committing `a + 1` tokens: the same per-step counts the reference loop records.

transformers runs DFlash v1 in the assistant export dialect only (MuseGlimmerAssistantModel: no conv,
no candidate selector); any other drafter is refused with the reason, cited to the release.
"""

from __future__ import annotations

import importlib
import os
import time
from pathlib import Path
from typing import Any

from ..engines import released as r
from ..engines.transformers import PROFILES
from ..engines.versions import parse_version
from ..errors import ConfigError, MissingDependencyError, UsageError
from ..findings import Finding
from . import accept, checks, stats
from .prompts import load_prompts
from .report import AcceptReport, PromptResult

ENGINE = "transformers"
COUNTED = (
    "tokens generate() puts to its streamer per target forward after the prefill "
    f"({r.T_GEN}: streamer.put(valid_tokens.cpu()))"
)


class StepCounter:
    """A transformers streamer (BaseStreamer's put/end) that keeps the size of every put."""

    def __init__(self) -> None:
        self.puts: list[int] = []

    def put(self, value: Any) -> None:
        self.puts.append(int(value.numel()))

    def end(self) -> None:
        pass

    def accepted(self) -> list[int]:
        """Accepted drafts per verification step: puts after the prompt and the prefill's token, minus the
        target's own token of that step."""
        return [n - 1 for n in self.puts[2:]]


def _label(drafter: Any) -> str:
    return str(getattr(drafter, "label", None) or drafter)


def _directory(drafter: Any) -> Path:
    """Where transformers can load the drafter from: the local directory, or the downloaded Hub files."""
    if not hasattr(drafter, "list_files"):
        return Path(os.path.expanduser(str(drafter)))
    if drafter.root is not None:
        return Path(drafter.root)
    got = [drafter.download(n) for n in drafter.list_files() if n.endswith((".json", ".safetensors"))]
    config = next((p for p in got if p is not None and p.name == "config.json"), None)
    if config is None:
        raise ConfigError(
            "the drafter's files could not be downloaded for transformers", path=_label(drafter)
        )
    return Path(config.parent)


def _supported(drafter: Any) -> tuple[Any, Path]:
    """(spec, directory) of a drafter transformers can run, else UsageError naming what transformers lacks."""
    from ..checkpoint import open_checkpoint  # lazy: checkpoint loads only on this path

    spec = open_checkpoint(drafter).spec
    if spec is None:
        raise ConfigError(
            "not a DFlash drafter transformers could load",
            path=_label(drafter),
            hint="run `dflash2-ckpt verify` on it",
        )
    if spec.version == "v2":
        raise UsageError(
            "transformers cannot run a DFlash2 drafter: its DFlash assisted generation drafts with "
            "MuseGlimmerAssistantModel, which has no conv and no candidate selector "
            f"({r.TF_NO_SELECTOR}; {r.TF_DFLASH})",
            path=_label(drafter),
            hint="measure it with the reference loop (--engine reference) or --engine llama.cpp",
        )
    if spec.dialect != "assistant":
        raise UsageError(
            "transformers loads DFlash v1 only in the assistant export dialect (MuseGlimmerAssistantModel, "
            "model_type muse_glimmer_assistant: the DFlash keys at the top level, encoder.fc / "
            f"encoder.output_norm_enc); this drafter is in the {spec.dialect} dialect, for which transformers "
            f"has no model class ({r.TF_TAPS})",
            path=_label(drafter),
            hint="measure it with the reference loop (--engine reference)",
        )
    return spec, _directory(drafter)


def _installed() -> str:
    """The installed transformers version, when a profile says it runs DFlash assisted generation."""
    import transformers  # heavy: transformers loads only when this runs

    version = str(transformers.__version__)
    if not any(p.versions.contains(parse_version(version, "release")) for p in PROFILES):
        ranges = ", ".join(p.versions.label for p in PROFILES)
        raise MissingDependencyError(
            f"transformers {version} has no DFlash assisted generation (it runs in transformers {ranges})",
            hint="pip install -U transformers",
        )
    return version


def _load(auto: Any, path: Path, dev: Any) -> Any:
    """A float32 model on `dev`, without transformers' loading bar (the report is the output)."""
    import torch  # heavy: torch loads only when this runs

    tf_logging: Any = importlib.import_module("transformers.utils.logging")  # untyped module
    shown = tf_logging.is_progress_bar_enabled()
    tf_logging.disable_progress_bar()
    try:
        return auto.from_pretrained(str(path), dtype=torch.float32).to(dev).eval()
    except (OSError, ValueError, KeyError, RuntimeError) as e:
        raise ConfigError(
            f"transformers cannot load it: {str(e).splitlines()[0] if str(e) else type(e).__name__}",
            path=str(path),
            hint="run `dflash2-ckpt verify` on it",
        ) from None
    finally:
        if shown:
            tf_logging.enable_progress_bar()


def _generate(model: Any, ids: list[int], max_new: int, **kw: Any) -> tuple[list[int], float]:
    import torch  # heavy: torch loads only when this runs

    x = torch.tensor([ids], device=model.device)
    t0 = time.perf_counter()
    try:
        with torch.no_grad():
            out = model.generate(
                x, attention_mask=torch.ones_like(x), max_new_tokens=max_new, do_sample=False, **kw
            )
    except (IndexError, ValueError, RuntimeError) as e:
        what = "assisted generation" if "assistant_model" in kw else "generation"
        raise ConfigError(
            f"transformers' {what} failed: {str(e).splitlines()[0] if str(e) else type(e).__name__}",
            hint="run `dflash2-ckpt verify DRAFTER --target TARGET`",
        ) from None
    if model.device.type == "cuda":
        torch.cuda.synchronize(model.device)
    return [int(t) for t in out[0, len(ids) :].tolist()], time.perf_counter() - t0


def run_transformers_accept(
    drafter: Any,
    target: str | os.PathLike[str],
    *,
    prompts: str | os.PathLike[str] | None = None,
    max_new_tokens: int = 64,
    expect: Any = None,
    limit: int | None = None,
    device: str | None = None,
    revision: str | None = None,
    token: str | None = None,
    max_memory: int | None = None,
    reference: bool = True,
) -> AcceptReport:
    """drafter: a DFlash v1 checkpoint in the assistant dialect; target: a transformers model (dir or Hub id)."""
    if max_new_tokens < 1:
        raise ConfigError("max_new_tokens must be at least 1", field="max_new_tokens")
    want = checks.parse_expect(expect)
    spec, drafter_dir = _supported(drafter)
    version = _installed()
    # heavy: transformers loads only when this runs
    from transformers import AutoModel, AutoModelForCausalLM, AutoTokenizer

    from ..smoke.device import pick_device  # lazy: smoke.device loads only on this path
    from .run import within_budget  # lazy: accept.run loads only on this path
    from .target import resolve_target  # lazy: accept.target loads only on this path

    root = resolve_target(target, revision=revision, token=token)
    within_budget(drafter, root, device, max_memory)
    dev = pick_device(device)
    t0 = time.perf_counter()
    tok = AutoTokenizer.from_pretrained(str(root))
    model, assistant = _load(AutoModelForCausalLM, root, dev), _load(AutoModel, drafter_dir, dev)
    text = model.config.get_text_config()
    vocab, layers = int(text.vocab_size), int(text.num_hidden_layers)
    if any(t >= layers for t in spec.target_layer_ids):
        raise ConfigError(
            f"target_layer_ids {list(spec.target_layer_ids)} name layers the {layers}-layer target "
            "does not have",
            field="target_layer_ids",
            hint="pair the drafter with its own target",
        )
    if spec.mask_token_id is not None and spec.mask_token_id >= vocab:
        raise ConfigError(
            f"mask_token_id {spec.mask_token_id} is outside the target's {vocab}-token vocabulary",
            field="mask_token_id",
            hint="pair the drafter with its own target",
        )
    plist, source = load_prompts(tok, prompts, root, limit)
    block = int(assistant.config.block_size)
    _generate(model, plist[0].ids[:4], 2)  # warm up both paths before anything is timed
    _generate(model, plist[0].ids[:4], 2, assistant_model=assistant, speculation_type="dflash")
    results: list[PromptResult] = []
    findings: list[Finding] = []
    spec_s = base_s = 0.0
    spec_tok = base_tok = 0
    for p in plist:
        base, b_s = _generate(model, p.ids, max_new_tokens)
        counter = StepCounter()
        run, s_s = _generate(
            model,
            p.ids,
            max_new_tokens,
            assistant_model=assistant,
            speculation_type="dflash",
            streamer=counter,
        )
        accepted = counter.accepted()
        findings += checks.lossless(p.label, base, run)
        results.append(
            PromptResult(
                p.label,
                len(p.ids),
                len(run),
                len(accepted),
                stats.step_tau(accepted, block),
                accepted,
                base == run,
                len(run) / s_s if s_s else 0.0,
                len(base) / b_s if b_s else 0.0,
            )
        )
        spec_s, base_s, spec_tok, base_tok = (
            spec_s + s_s,
            base_s + b_s,
            spec_tok + len(run),
            base_tok + len(base),
        )
    every = [a for res in results for a in res.accepted]
    tau = stats.pooled_tau([res.accepted for res in results])
    opening = checks.opening_tau([res.accepted for res in results])
    if every:
        findings += checks.judged(opening.mean, tau.mean, block, max_new_tokens, want)
    if len(every) < checks.MIN_STEPS:
        findings += checks.caveats([], 0, len(every))
    details: dict[str, Any] = {
        "transformers": version,
        "speculation_type": "dflash",
        "counted_from": COUNTED,
        "draft_n": len(every) * (block - 1),
        "draft_n_accepted": sum(every),
        "summary": f"{sum(every)} of {len(every) * (block - 1)} drafted tokens accepted "
        f"(generate(assistant_model=..., speculation_type='dflash'), {block - 1} drafts per step)",
    }
    details["wall_s"] = round(time.perf_counter() - t0, 2)
    if reference:
        details["parity"] = parity_run(
            drafter, root, prompts, max_new_tokens, limit, str(dev), tau.mean, results
        )
        findings += details["parity"].pop("findings")
    steps = len(every)
    return AcceptReport(
        drafter=_label(drafter),
        target=str(target),
        device=str(dev),
        kernels=ENGINE,
        block_size=block,
        max_new_tokens=max_new_tokens,
        prompts_source=source,
        tau=tau,
        acceptance_rate=stats.acceptance_rate(every, block - 1),
        per_position=stats.per_position(every, block - 1),
        tokens_per_s=spec_tok / spec_s if spec_s else 0.0,
        baseline_tokens_per_s=base_tok / base_s if base_s else 0.0,
        target_forwards={
            "baseline": base_tok,
            "speculative": steps + len(plist),
            "saved": base_tok - steps - len(plist),
        },
        prompts=results,
        expect=want,
        findings=findings,
        engine=ENGINE,
        build=f"transformers {version}",
        engine_details=details,
        tau_opening=opening,
    )


def parity_run(
    drafter: Any,
    target: Path,
    prompts: str | os.PathLike[str] | None,
    max_new: int,
    limit: int | None,
    device: str,
    tau_engine: float,
    engine: list[PromptResult],
) -> dict[str, Any]:
    """The reference loop on the same drafter, target and prompts, counted as transformers counts.

    transformers crops the tokens of a prompt's last step to max_new_tokens (and at end-of-sequence) before
    it puts them to the streamer; the reference loop's tau counts that step whole. So the ratio compares
    tau_engine with the reference's committed tokens (its output, cropped the same way, minus the prefill's
    token) per verification step; tau_reference is the loop's own figure, reported beside it."""

    ref = accept(drafter, target, prompts=prompts, max_new_tokens=max_new, limit=limit, device=device)
    steps = sum(f.steps for f in ref.prompts)
    committed = checks.committed_tau([f.generated for f in ref.prompts], [f.steps for f in ref.prompts])
    ratio = tau_engine / committed if committed else 0.0
    pairs = [(a, b) for e, f in zip(engine, ref.prompts) for a, b in zip(e.accepted, f.accepted)]
    return {
        "tau_engine": round(tau_engine, 4),
        "tau_reference": round(ref.tau.mean, 4),
        "tau_reference_committed": round(committed, 4),
        "ratio": round(ratio, 4),
        "floor": checks.PARITY_FLOOR,
        "steps_engine": sum(e.steps for e in engine),
        "steps_reference": steps,
        "steps_same_accepted": sum(a == b for a, b in pairs),
        "findings": checks.parity(
            ENGINE,
            tau_engine,
            committed,
            advice="check the drafter's taps and causality against the profile "
            "(`dflash2-ckpt compat DRAFTER --engine transformers`)",
        ),
    }
