"""What `convert --to X` would make of a checkpoint, from its headers alone: the Drafter an engine would then
judge, or the refusal convert itself would give. `compat` here is the use case's compat with every
needs-conversion verdict checked this way, so the advice is only ever a command that works (and whose
output that engine loads); otherwise the verdict is `fails` with the refusal (DF814).
"""

from __future__ import annotations

import dataclasses
import json
import os
from collections.abc import Iterable
from typing import Any

from ..checkpoint import Checkpoint, open_checkpoint
from ..checkpoint.drafter import drafter_of
from ..engines import Drafter, EngineRef
from ..engines.judge import EngineVerdict, conversion_target, judge, target_note
from ..errors import ConversionError, Dflash2Error
from ..findings import Finding
from ..formats import gguf_names as N
from ..formats.parse import to_spec
from ..formats.spec import DraftSpec
from ..sources import Source
from ..usecases.compat import CompatReport
from ..usecases.compat import compat as judged
from .configs import Verifier, nested_to_flat
from .exactness import drafter_differences
from .meaning import check_drafters, planned_drafter
from .plan import make_plan, refuse_source

EMITS: frozenset[str] = frozenset({"DF814"})

# the target named in the advised command stands in for the one the user passes: its architectures
# only fill speculators_config.verifier, which no judgement reads
_STAND_IN = ("TargetForCausalLM",)


def converted_drafter(
    ckpt: Checkpoint, to: str, *, target: str | None = None, out: str = "DRAFTER"
) -> Drafter:
    """The drafter `convert --to {to}` would write. Raises ConversionError (or ConversionUsageError,
    SourceError) exactly where convert would refuse, before anything is written."""
    d = drafter_of(ckpt, target=target)
    if ckpt.gguf is not None:
        return _from_gguf(ckpt, d, to, out)
    if to == "gguf":
        from .to_gguf import plan_tensors  # lazy: convert.to_gguf loads only on this path

        refuse_source(ckpt)
        tensors, _ = plan_tensors(ckpt, None)
        if d.spec is None:
            raise ConversionError("the config does not describe a DFlash drafter")
        return d.converted(
            "gguf",
            d.spec,
            d.config,
            (t.gguf_name for t in tensors),
            quantized_modules=d.quantized_modules,
            path=out,
        )
    if to not in ("nested", "flat"):
        raise ConversionError(f"convert writes nested, flat or gguf, not {to}")
    verifier = Verifier(target or "TARGET", _STAND_IN) if to == "flat" else None
    plan = make_plan(ckpt, out, to, verifier=verifier)  # type: ignore[arg-type]
    planned = planned_drafter(plan, d, out)
    check_drafters(d, planned)  # convert refuses a conversion that changes an engine's drafter
    return planned


def _from_gguf(ckpt: Checkpoint, d: Drafter, to: str, out: str) -> Drafter:
    from .from_gguf import nested_config  # lazy: convert.from_gguf loads only on this path

    if to not in ("nested", "flat"):
        raise ConversionError("the source is already GGUF; convert it to nested or flat")
    spec = ckpt.spec
    if ckpt.gguf is None or spec is None:
        raise ConversionError("the GGUF metadata does not describe a DFlash drafter")
    names = {t.name: N.gguf_to_hf(t.name) for t in ckpt.gguf.tensors}
    if "d2t" in names:
        return _reduced_from_gguf(ckpt, spec, names, d, to, out)
    lost = [g for g, hf in names.items() if hf is None]
    if lost:
        raise ConversionError(f"{lost[0]} is not a DFlash tensor llama.cpp names; converting would lose it")
    cfg = nested_config(spec, "float32")
    new, _ = to_spec(cfg)
    if new is None:
        raise ConversionError("the GGUF metadata does not give a nested config that parses")
    if to == "flat":  # convert goes through the nested form, then the dialect conversion
        cfg, _, _ = nested_to_flat(cfg, new, Verifier(d.target or "TARGET", _STAND_IN))
        flat, _ = to_spec(cfg)
        if flat is None:
            raise ConversionError("internal: the flat form does not parse")
        diffs = drafter_differences(new, flat)
        if diffs:
            raise ConversionError("the conversion would not be exact: " + "; ".join(diffs))
        new = flat
    return d.converted(to, new, cfg, (hf for hf in names.values() if hf), path=out)


def _reduced_from_gguf(
    ckpt: Checkpoint, spec: DraftSpec, names: dict[str, str | None], d: Drafter, to: str, out: str
) -> Drafter:
    """A GGUF with a reduced draft vocabulary goes back to the flat dialect only, from the config it carries
    (convert/from_gguf.py): lm_head, d2t as offsets and t2d rebuilt beside the other tensors."""
    from . import gguf_vocab as V  # lazy: convert.gguf_vocab loads only on this path
    from .from_gguf import gguf_config  # lazy: convert.from_gguf loads only on this path

    assert ckpt.gguf is not None
    raw, source = gguf_config(ckpt.gguf, spec, "float32", [])
    cfg = json.loads(raw) if source == "embedded" else None
    new = to_spec(cfg)[0] if isinstance(cfg, dict) else None
    if to != "flat" or not isinstance(cfg, dict) or new is None or new.dialect != "flat":
        raise ConversionError(
            "a reduced draft vocabulary (d2t) converts back to the flat dialect only, from the "
            "flat config.json the GGUF carries"
        )
    lost = [g for g, hf in names.items() if hf is None and g not in (V.D2T, V.HEAD_GGUF)]
    if lost:
        raise ConversionError(f"{lost[0]} is not a DFlash tensor llama.cpp names; converting would lose it")
    tensors = (
        {hf for hf in names.values() if hf}
        | {V.D2T, V.T2D}
        | ({V.HEAD_HF} if V.HEAD_GGUF in names else set())
    )
    return d.converted("flat", new, cfg, tensors, path=out)


def _advice_holds(v: EngineVerdict, ckpt: Checkpoint, d: Drafter) -> EngineVerdict:
    """A needs-conversion verdict stands only when convert would do it and that engine loads the result;
    otherwise the verdict is `fails` with convert's refusal, or with what still stops the converted drafter."""
    if v.verdict != "needs-conversion":
        return v
    p, to = v.profile, conversion_target(v.profile)
    reads = "/".join(sorted(p.reads))
    try:
        after = judge(p, converted_drafter(ckpt, to, target=d.target))
    except Dflash2Error as e:
        return EngineVerdict(
            p,
            "fails",
            (
                Finding(
                    "DF814",
                    f"{p.title} reads {reads}, not the {d.dialect} dialect, and `dflash2-ckpt convert --to {to}` "
                    f"refuses this checkpoint: {e.message}",
                    details={"to": to, "refusal": e.message},
                ),
            ),
            None,
        )
    if after.verdict in ("loads", "degraded"):
        return v
    why = "; ".join(f"{r.code} {r.message}" for r in after.reasons if r.severity == "error") or after.verdict
    return EngineVerdict(
        p,
        "fails",
        (
            Finding(
                "DF814",
                f"{p.title} reads {reads}, not the {d.dialect} dialect, and converted with `convert --to {to}` "
                f"it would still not load: {why}",
                details={"to": to, "after": after.verdict},
            ),
        )
        + after.reasons,
        None,
    )


def _fix_holds(v: EngineVerdict, ckpt: Checkpoint, d: Drafter) -> EngineVerdict:
    """A refusal that advises a conversion (details: command, to, rule) keeps the command only when convert
    would do it, the converted drafter no longer meets the refusal and that engine loads it; otherwise the
    command is taken out and the reason says why."""
    if v.verdict != "fails" or not any((r.details or {}).get("command") for r in v.reasons):
        return v
    p = v.profile
    reasons = []
    for r in v.reasons:
        info = r.details or {}
        if not info.get("command"):
            reasons.append(r)
            continue
        rules = {x.name: x for x in p.requires + p.constraints}
        rule = rules.get(str(info.get("rule")))
        try:
            after_d = converted_drafter(ckpt, str(info["to"]), target=d.target)
            after = judge(p, after_d)
            why = (
                None
                if after.verdict in ("loads", "degraded") and (rule is None or rule.check(after_d) is None)
                else ", ".join(sorted({x.code for x in after.reasons if x.severity == "error"}))
                or after.verdict
            )
        except Dflash2Error as e:
            why = f"convert refuses it: {e.message}"
        if why is None:
            reasons.append(r)
            continue
        plain = r.message.replace(
            f"; `{info['command']}` writes them so{target_note(d, str(info['to']))}", ""
        )
        reasons.append(
            Finding(
                r.code,
                f"{plain}; converting with `convert --to {info['to']}` would not make it "
                f"load (it then reports {why})",
                details={"to": info["to"], "after": why},
            )
        )
    return dataclasses.replace(v, reasons=tuple(reasons))


def compat(
    path: str | os.PathLike[str] | Source | Checkpoint,
    *,
    engines: Iterable[str | EngineRef] = (),
    target: str | None = None,
    findings: Iterable[Finding] | None = None,
    **kw: Any,
) -> CompatReport:
    """The verdict per engine (usecases.compat.compat), each advised conversion checked against convert."""
    ckpt = path if isinstance(path, Checkpoint) else open_checkpoint(path)
    report = judged(ckpt, engines=engines, target=target, findings=findings, **kw)
    d = drafter_of(ckpt, target=target, quantized_modules=kw.get("quantized_modules"))  # the one judged above
    return dataclasses.replace(
        report, verdicts=tuple(_fix_holds(_advice_holds(v, ckpt, d), ckpt, d) for v in report.verdicts)
    )
