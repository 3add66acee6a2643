"""Smoke forward: prove a drafter's tensors actually draft (the `[smoke]` extra: torch, triton).

Importing this package is free; torch and triton load only when `run_smoke` runs, so the
header-level toolkit never pays for them.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from ..errors import ConfigError
from ..findings import Finding
from .opening import open_for_smoke, require_smoke_deps, tensor_files
from .report import SmokeReport

__all__ = ["SmokeReport", "require_smoke_deps", "run_smoke", "draft", "load_drafter", "open_for_smoke"]
EMITS: frozenset[str] = frozenset({"DF716"})


def draft(checkpoint: Any, hidden_states: Any, anchors: Any, **options: Any) -> Any:
    """Draft one block per request and return every stage (smoke.drafting.DraftResult); torch loads here."""
    from .drafting import draft as _draft  # lazy: smoke.drafting loads only on this path

    return _draft(checkpoint, hidden_states, anchors, **options)


def load_drafter(checkpoint: Any, **options: Any) -> Any:
    """Load a drafter once for repeated drafting (smoke.drafting.Drafter); torch loads here."""
    from .drafting import load_drafter as _load  # lazy: smoke.drafting loads only on this path

    return _load(checkpoint, **options)


def _first_layers(ckpt: Any, layers: int | None) -> tuple[Any, dict[str, Any], list[Any]]:
    """The spec and tensors of the first `layers` draft layers (--layers), and the note that says so."""

    spec, tensors = ckpt.spec, dict(ckpt.tensors)
    if layers is None or layers >= spec.num_hidden_layers:
        return spec, tensors, []
    if layers < 1:
        raise ConfigError("--layers must be at least 1")
    spec = spec.with_(num_hidden_layers=layers, layer_types=tuple(spec.layer_types[:layers]))
    kept = {
        n: t
        for n, t in tensors.items()
        if not (m := re.match(r"^(?:model\.)?layers\.(\d+)\.", n)) or int(m.group(1)) < layers
    }
    note = Finding(
        "DF716",
        f"the smoke ran the first {layers} of {ckpt.spec.num_hidden_layers} draft layers "
        "(--layers): the later layers' tensors were neither loaded nor checked",
        details={"layers": layers, "of": ckpt.spec.num_hidden_layers},
    )
    return spec, kept, [note]


def _target_dir(target: Any) -> Path | None:
    """A target directory, or an opened Source: a local one lends its directory; a Hub one only its
    config (the weights are not downloaded for a smoke), so the smoke falls back to random embeddings."""
    if target is None or isinstance(target, (str, os.PathLike)):
        return Path(target) if target is not None else None
    local = target.local_path("config.json")
    return Path(local).parent if local is not None else None


def run_smoke(
    path_or_checkpoint: Any,
    *,
    target: Any = None,
    hidden_states: str | os.PathLike[str] | None = None,
    block_size: int | None = None,
    seed: int = 0,
    device: str | None = None,
    requests: int = 2,
    layers: int | None = None,
    max_memory: int | None = None,
    threads: int | None = None,
    progress: Any = None,
) -> SmokeReport:
    """Run the drafter once on smoke inputs and cross-check it (findings DF7xx).

    path_or_checkpoint: a checkpoint directory, a Source, or an opened Checkpoint. Before anything is
    loaded, memory and time are estimated; above `max_memory` bytes (default: a safe fraction of the
    device's memory) BudgetError says how to proceed. progress(stage, done, total) is called per stage
    (first once with total 0 and the estimate as its text). threads: torch's intra-op threads
    (default: chosen from OMP_NUM_THREADS, the usable cores and the load; dflash2_ckpt.threads).
    target: the target model's directory, or an opened Source (see _target_dir).
    Raises MissingDependencyError without torch/triton, ConfigError when the config does not parse
    into a drafter (verify says why), SourceError when the files cannot be read.
    """
    ckpt = open_for_smoke(path_or_checkpoint)
    from ..threads import apply as apply_threads  # lazy: threads loads only on this path

    # lazy: smoke.budget loads only on this path
    from .budget import check_budget, estimate, gib, machine_budget, matmul_rate, runtime_bytes
    from .device import pick_device, prepare_triton  # lazy: smoke.device loads only on this path
    from .runner import DEFAULT_BLOCK, smoke  # lazy: smoke.runner loads only on this path

    chosen = apply_threads(threads)

    spec, tensors, notes = _first_layers(ckpt, layers)
    dev = pick_device(device)
    block = block_size or spec.block_size or DEFAULT_BLOCK
    carried = {"embed_tokens.weight", "lm_head.weight"} & set(tensors)
    prepare_triton(dev)  # triton in the mode this device needs, resident before the footprint is measured
    rate = matmul_rate(dev)
    est = estimate(
        spec,
        requests=requests,
        block=block,
        rate=rate,
        interpret=dev.type != "cuda",
        runtime=runtime_bytes(),
        tied_head=len(carried) == 1 and "embed_tokens.weight" in carried,
    )
    budget = max_memory if max_memory is not None else machine_budget(dev.type)
    check_budget(est, budget, device_type=dev.type, layers=spec.num_hidden_layers, requests=requests)
    if progress is not None:  # total 0: a note, not a stage
        progress(f"estimated {gib(est.peak_bytes)}, ~{est.seconds:.0f} s; conv: {est.triton_conv}", 0, 0)
    report = smoke(
        spec,
        tensor_files(ckpt, tensors),
        label=ckpt.source.label,
        target=_target_dir(target),
        hidden_states=Path(hidden_states) if hidden_states is not None else None,
        block_size=block_size,
        seed=seed,
        device=str(dev),
        requests=requests,
        progress=progress,
    )
    report.findings[:0] = notes
    report.estimate = {**est.to_json(), "budget_bytes": budget}
    report.threads = chosen.to_json()
    return report
