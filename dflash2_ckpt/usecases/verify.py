"""verify / inspect: open a checkpoint, run the check families in order (checks/suite.py), return one Report."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

from ..checkpoint import Checkpoint, open_checkpoint
from ..checkpoint.accounting import quant_summary
from ..checkpoint.drafter import drafter_of
from ..checkpoint.layout import bytes_by_component
from ..checkpoint.target import read_target
from ..checks.context import CheckContext, CheckOptions
from ..checks.pairing import borrow_target_vocab
from ..checks.suite import OPENING, run_checks, run_families
from ..engines import EngineRef, newest_supporting, resolve
from ..engines.checked import edge_finding
from ..engines.effective import engine_views
from ..errors import HeaderError
from ..findings import Finding, Verdict, filter_findings
from ..formats.families import RICURSIVE, nope_layers
from ..sources import Source
from .compat import engine_verdicts, family_json
from .fix import annotate


@dataclass(frozen=True)
class Report(Verdict):
    subject: str
    summary: Mapping[str, Any]
    findings: tuple[Finding, ...]
    bytes_read: int
    extra: Mapping[str, Any] = field(default_factory=dict)
    # the checkpoint as verify opened it, so what runs next (the smoke forward) does not open it again
    checkpoint: Checkpoint | None = field(default=None, compare=False, repr=False)
    # every family's findings by name, before --select / --ignore: convert's refusals read them
    families: Mapping[str, tuple[Finding, ...]] = field(default_factory=dict, compare=False, repr=False)
    kind: ClassVar[str] = "verify"

    @property
    def passed(self) -> bool:
        """No error finding, and the subject is a DFlash drafter at all (a DSpark config never passes)."""
        return not self.failed() and self.summary.get("version") is not None

    def to_json(self) -> dict[str, Any]:
        counts = {s: sum(f.severity == s for f in self.findings) for s in ("error", "warning", "info")}
        return {
            "subject": self.subject,
            "passed": self.passed,
            "counts": counts,
            "summary": dict(self.summary),
            "bytes_read": self.bytes_read,
            "findings": [f.to_json() for f in self.findings],
            **dict(self.extra),
        }


class InspectReport(Report):
    """What a checkpoint is (inspect); rendered as its summary."""

    kind: ClassVar[str] = "inspect"


def summarize(ckpt: Checkpoint) -> dict[str, Any]:
    det, spec = ckpt.detection, ckpt.spec
    out: dict[str, Any] = {
        "dialect": det.dialect if det else None,
        "version": det.version if det else None,
        "other_drafter": det.other if det else None,
        "files": sorted(ckpt.headers),
        "tensor_count": len(ckpt.tensors),
        "bytes_by_component": bytes_by_component(ckpt.tensors.values()),
        "data_bytes": sum(h.data_bytes for h in ckpt.headers.values()),
        "dtypes": sorted({t.dtype for t in ckpt.tensors.values()}),
        "family": family_json(ckpt),
    }
    if ckpt.gguf is not None:
        from ..checkpoint.gguf import gguf_summary  # gguf + numpy load only for a GGUF file

        out.update(gguf_summary(ckpt.gguf))
    quant = quant_summary(ckpt)
    if quant is not None:
        out["quantization"] = quant
    if spec is not None:
        out["geometry"] = {
            "hidden_size": spec.hidden_size,
            "intermediate_size": spec.intermediate_size,
            "num_hidden_layers": spec.num_hidden_layers,
            "num_attention_heads": spec.num_attention_heads,
            "num_key_value_heads": spec.num_key_value_heads,
            "head_dim": spec.head_dim,
            "vocab_size": spec.vocab_size,
            "target_layer_ids": list(spec.target_layer_ids),
            "num_target_layers": spec.num_target_layers,
            "target_hidden_size": spec.target_hidden_size,
            "block_size": spec.block_size,
            "mask_token_id": spec.mask_token_id,
            "conv_kernel_size": spec.conv_kernel_size,
            "conv_group_size": spec.conv_group_size,
            "selector_rank": spec.selector_rank,
            "selector_top_k": spec.selector_top_k,
            "sliding_window": spec.sliding_window,
        }
        views = engine_views(newest_supporting(spec.version), drafter_of(ckpt))
        # a Ricursive drafter's NoPE layers, as vLLM 0.34.0 reads no_rope_layers (layer indices)
        nope = nope_layers(ckpt.config or {}, spec.num_hidden_layers) if spec.family == RICURSIVE else []
        out["engines"] = views
        out["layers"] = [
            {
                "index": i,
                "type": spec.layer_types[i] if i < len(spec.layer_types) else None,
                "type_text": _layer_type_text(spec, i) + (" (NoPE on vLLM 0.34+)" if i in nope else ""),
                **({"nope": i in nope} if spec.family == RICURSIVE else {}),
                "causal": {
                    v["engine"]: (
                        v["causal"][i] if v["causal"] is not None and i < len(v["causal"]) else None
                    )
                    for v in views
                },
            }
            for i in range(spec.num_hidden_layers)
        ]
    return out


def _layer_type_text(spec: Any, i: int) -> str:
    """What a layer is, for people: its layer_types entry, or what says more when the config has none."""
    given = spec.layer_types[i] if i < len(spec.layer_types) else None
    if given is not None:
        return str(given)
    if spec.drafter_extra.get("use_swa"):  # MiMo-style: the window comes from dflash_config
        window = spec.drafter_extra.get("swa_window_size") or spec.sliding_window
        return f"not in layer_types; dflash_config.use_swa (window {window})"
    return "not in layer_types"


def verify(
    path: str | os.PathLike[str] | Source | Checkpoint,
    *,
    target: str | os.PathLike[str] | Source | None = None,
    select: Iterable[str] = (),
    ignore: Iterable[str] = (),
    scan: bool = False,
    engines: Iterable[str | EngineRef] = (),
    progress: Callable[[int, int, str], None] | None = None,
) -> Report:
    """Header-level verification. Raises SourceError when the checkpoint cannot be read at all.

    scan=True also streams every floating-point tensor through the NaN / Inf scan (DF611); without
    it no tensor data is read. engines: `vllm@0.29.0`-style names to judge against (default: the newest
    profile of each engine that supports this drafter's version); UnknownEngine for a name no profile covers.
    progress(done, total, tensor): called as the scan reads each tensor.
    """
    ckpt = path if isinstance(path, Checkpoint) else open_checkpoint(path)
    engines = list(engines)
    profiles = tuple(dict.fromkeys(resolve(e) for e in engines))
    t = None if target is None else read_target(target)
    borrow_target_vocab(ckpt, t.config if t is not None else None)
    ctx = CheckContext(ckpt, t, CheckOptions(scan=scan, engines=profiles, progress=progress))
    families = {name: tuple(found) for name, found in run_families(ctx).items()}
    found = [f for fs in families.values() for f in fs]
    # a version named past the releases whose code was read is judged as the nearest one: say so (DF816)
    found += [f for f in (edge_finding(resolve(e), e) for e in engines) if f is not None]
    extra = {**ckpt.source.report_extra(), **ctx.extra}
    if profiles:
        # the named engines' verdicts, from the function compat's rows come from: they cannot disagree
        label = t.label if t is not None else None
        extra["verdicts"] = [v.to_json() for v in engine_verdicts(ckpt, profiles, found, target=label)]
    kept = annotate(filter_findings(found, select, ignore), ckpt)  # each says whether --fix repairs it
    return Report(
        ckpt.label, summarize(ckpt), kept, ckpt.bytes_read, extra=extra, checkpoint=ckpt, families=families
    )


# file-level findings that mean the tensors could not be listed at all: inspect has nothing true to show
UNREADABLE = frozenset({"DF603", "DF604", "DF607", "DF608"})


def inspect(path: str | os.PathLike[str] | Source) -> InspectReport:
    """What the checkpoint is. Raises SourceError when it cannot be read, HeaderError when a safetensors
    header or the index is unreadable (a summary of "0 tensors" would be a lie)."""
    ckpt = open_checkpoint(path)
    found = run_checks(CheckContext(ckpt), only=OPENING)
    bad = [f for f in found if f.code in UNREADABLE]
    if bad:
        raise HeaderError(
            f"{bad[0].code} {bad[0].message}",
            path=ckpt.label,
            tensor=bad[0].tensor,
            hint="run `dflash2-ckpt verify` for every finding; re-download or re-save the file",
        )
    return InspectReport(
        ckpt.label, summarize(ckpt), tuple(found), ckpt.bytes_read, extra=ckpt.source.report_extra()
    )
