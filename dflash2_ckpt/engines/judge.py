"""One profile x one drafter -> a verdict with its reasons (DF8xx findings) and, when it loads, the command.

Order: verify errors this engine would hit (DF813: a checkpoint verify rejects never "loads") >
unsupported (no such drafter in that release; a file it reads but cannot load is a quoted
failure instead) > needs-conversion / unreadable format > known breakage > refusals (required keys, hard
constraints, quantized modules) > silent divergence (causality, silent defaults, dropped modules) > loads.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Literal

from ..findings import Finding
from . import causality as rules
from .checked import Span, span
from .dspark import served as dspark_served
from .layouts import layout_findings
from .profile import Default, Drafter, Profile, Refusal

EMITS: frozenset[str] = frozenset(
    {
        "DF800",
        "DF801",
        "DF802",
        "DF803",
        "DF804",
        "DF805",
        "DF806",
        "DF807",
        "DF808",
        "DF809",
        "DF810",
        "DF811",
        "DF812",
        "DF813",
        "DF815",
        "DF830",
        "DF831",
        "DF840",
        "DF841",
    }
)

# not-validated: a sibling family (DSpark) the release serves and this toolkit does not check (DF850);
# unverified: the release's code cannot be read (compiled), so nothing is promised either way
Verdict = Literal[
    "loads", "degraded", "fails", "needs-conversion", "unsupported", "not-validated", "unverified"
]
VERDICTS: tuple[Verdict, ...] = (
    "loads",
    "degraded",
    "fails",
    "needs-conversion",
    "unsupported",
    "not-validated",
    "unverified",
)


@dataclass(frozen=True)
class EngineVerdict:
    profile: Profile
    verdict: Verdict
    reasons: tuple[Finding, ...]
    serve: str | None
    asked: str | None = None  # the version named (--engine NAME@VERSION), judged by this profile

    @property
    def checked(self) -> Span | None:
        """The releases of this profile's range whose code was read (engines/checked.py)."""
        return span(self.profile)

    def to_json(self) -> dict[str, Any]:
        checked = self.checked
        out = {
            "engine": self.profile.engine,
            "versions": self.profile.versions.label,
            "checked_from": checked.first if checked else None,
            "checked_through": checked.last if checked else None,
            "verdict": self.verdict,
            "reasons": [{"code": r.code, "severity": r.severity, "message": r.message} for r in self.reasons],
            "serve": self.serve,
        }
        return out | ({"asked": self.asked} if self.asked else {})


def _layers(ids: list[int], n: int) -> str:
    return (
        "every layer"
        if len(ids) == n
        else "layer" + ("s " if len(ids) > 1 else " ") + ", ".join(map(str, ids))
    )


def conversion_command(d: Drafter, to: str) -> str:
    """The advised `convert` line. convert reads --target from a local directory only (cli/convert.py), so a
    target named by Hub id (compat --target org/name) is written as the TARGET placeholder: target_note says
    how to fetch it."""
    out = "DRAFTER.gguf" if to == "gguf" else f"DRAFTER-{to}"
    cmd = f"dflash2-ckpt convert {d.path} --to {to} -o {out}"
    if needs_target(d, to):
        cmd += f" --target {d.target if d.target and os.path.isdir(d.target) else 'TARGET'}"
    return cmd


def needs_target(d: Drafter, to: str) -> bool:
    # convert takes vocab_size from the target (also once the pairing checks borrowed it: "target")
    borrowed = d.spec is not None and d.spec.vocab_from in ("bound", "target")
    return to in ("gguf", "flat") or borrowed


def target_note(d: Drafter, to: str) -> str:
    """What --target of an advised command must be: a local directory with the target's config.json (and, for
    GGUF, its tokenizer), never a Hub id; with the `hf download` line that makes one from a Hub target."""
    if not needs_target(d, to) or (d.target and os.path.isdir(d.target)):
        return ""
    files = "config.json tokenizer.json tokenizer_config.json" if to == "gguf" else "config.json"
    what = "config.json and tokenizer" if to == "gguf" else "config.json"
    repo = (
        d.target
        if d.target and "/" in d.target and not d.target.startswith((".", "/", "~"))
        else "ORG/TARGET"
    )
    alt = (
        f"; or name the verifier instead of --target: `--verifier-name {repo} --verifier-arch CLASS`"
        if to == "flat"
        else ""
    )
    return (
        f" (TARGET must be a local directory holding the target model's {what}, not a Hub id: "
        f"`hf download {repo} {files} --local-dir TARGET`{alt})"
    )


def conversion_target(p: Profile) -> str:
    """The dialect `convert --to` writes for this engine."""
    return "gguf" if "gguf" in p.reads else ("nested" if "nested" in p.reads else "flat")


def _format(p: Profile, d: Drafter) -> tuple[Verdict, Finding] | None:
    if d.dialect in p.reads:
        return None
    writable = p.reads & {"gguf", "nested", "flat"}  # convert reads all four, writes the first three
    if d.dialect in ("nested", "flat", "gguf", "assistant") and writable:
        to = conversion_target(p)
        cmd = conversion_command(d, to)
        # a GGUF file in a safetensors engine: the format is the reason, whatever the file's own findings
        what = (
            f"reads safetensors ({'/'.join(sorted(p.reads))}), not GGUF"
            if d.dialect == "gguf"
            else f"reads {'/'.join(sorted(p.reads))}, not the {d.dialect} dialect"
        )
        return "needs-conversion", Finding(
            "DF801",
            f"{p.title} {what}: convert first with `{cmd}`{target_note(d, to)}",
            details={"command": cmd, "to": to, "source": p.sources[-1].source},
        )
    return "fails", Finding(
        "DF811",
        f"{p.title} reads {'/'.join(sorted(p.reads))} only; this drafter is "
        f"{d.dialect or 'not a DFlash drafter'} and no conversion to it exists",
    )


def _lookup(config: Any, path: str) -> Any:
    node = config
    for part in path.split("."):
        if not isinstance(node, dict) or part not in node:
            return None
        node = node[part]
    return node


def own_value(d: Drafter, default: Default) -> Any:
    """The checkpoint's value for a key the engine defaults, or None when the engine would not see one.
    With `reads`, the value at the first of those config paths that holds one (what the engine reads)."""
    spec = d.spec
    if spec is None:
        return None
    if default.reads:
        for path in default.reads:
            value = _lookup(d.config, path)
            if value is not None:
                return tuple(value) if isinstance(value, list) else value
        return None
    if default.key == "sample_from_anchor":
        return spec.drafter_extra.get("sample_from_anchor")
    if default.key == "rope_theta":
        return spec.rope_theta if _has_rope(d) else None
    return getattr(spec, default.key, None)


def applies(default: Default, d: Drafter) -> bool:
    return default.only is None or default.only == d.version


def _has_rope(d: Drafter) -> bool:
    cfg = d.config.get("transformer_layer_config", d.config) if d.dialect == "flat" else d.config
    if not isinstance(cfg, dict):
        return False
    rp = cfg.get("rope_parameters")
    return "rope_theta" in cfg or (isinstance(rp, dict) and "rope_theta" in rp)


# what the reference reader assumes when a key is absent: the baseline a silent default is compared to
REFERENCE_DEFAULTS: dict[str, Any] = {"rope_theta": 10000.0, "sample_from_anchor": False}


def effective_value(d: Drafter, default: Default) -> Any:
    own = own_value(d, default)
    value = own if own is not None else (default.value(d.spec) if callable(default.value) else default.value)
    return list(value) if isinstance(value, tuple) else value


def _silent_defaults(p: Profile, d: Drafter) -> list[Finding]:
    out = []
    for df in p.defaults:
        if d.spec is None or not applies(df, d):
            continue
        own = own_value(d, df)
        ours = getattr(d.spec, df.key, None)
        if own is not None:
            # the engine reads another path than the one the checkpoint's value came from, and they disagree
            if df.reads and ours is not None and own != ours:
                out.append(
                    Finding(
                        "DF809",
                        f"{p.title} reads {df.reads[0]} = {_plain(own)}, not "
                        f"{d.spec.path(df.key)} = {_plain(ours)}: make them agree",
                        field=df.reads[0],
                        details={"key": df.key, "engine_value": _plain(own), "source": df.source},
                    )
                )
            continue
        value = effective_value(d, df)
        baseline = REFERENCE_DEFAULTS.get(df.key)
        if value is not None and value == baseline:
            continue
        where = df.reads[0] if df.reads else d.spec.path(df.key)
        out.append(
            Finding(
                "DF809",
                f"{p.title} finds no {where} it reads and silently uses {df.key} = {value}"
                f"{': ' + df.why if df.why else ''}. Set {where} explicitly",
                field=where,
                details={"key": df.key, "engine_value": value, "source": df.source},
            )
        )
    return out


def _plain(v: Any) -> Any:
    return list(v) if isinstance(v, tuple) else v


def _causality(p: Profile, d: Drafter) -> list[Finding]:
    spec = d.spec
    if spec is None or p.causality is None or len(spec.layer_types) != spec.num_hidden_layers:
        return []
    got = p.causality(spec)
    if got is None:
        return []
    want = rules.intended(spec)
    diff = [i for i, (a, b) in enumerate(zip(got, want)) if a != b]
    if not diff:
        return []
    became = "/".join(sorted({"causal" if got[i] else "bidirectional" for i in diff}))
    trained = "/".join(sorted({"causal" if want[i] else "bidirectional" for i in diff}))
    return [
        Finding(
            "DF808",
            f"{p.title} runs {_layers(diff, spec.num_hidden_layers)} {became} inside the block "
            f"where the checkpoint means {trained} ({p.causality_text}): nothing raises, acceptance drops",
            details={"layers": diff, "engine_causal": list(got), "intended_causal": list(want)},
        )
    ]


def _quant(p: Profile, d: Drafter) -> list[Finding]:
    if not d.quantized_modules:
        return []
    if p.quant is None:
        return [
            Finding(
                "DF810",
                f"{p.title}: how it treats quantized modules ({', '.join(sorted(d.quantized_modules))}) "
                "is not modelled",
            )
        ]
    code = {"fails": "DF806", "dense-required": "DF812", "dropped": "DF807", "degraded": "DF807"}
    return [
        Finding(
            code[o.effect],
            f"{p.title}: {o.message}",
            tensor=o.module,
            details={"module": o.module, "scheme": o.scheme, "effect": o.effect, "source": o.source},
        )
        for o in p.quant(d.quantized_modules)
    ]


def _ignored(p: Profile, d: Drafter) -> list[Finding]:
    out = []
    for rule in p.ignores:
        text = rule.check(d)
        if text and rule.code == "DF831":  # a family key the release ignores (engines/vllm_families.py)
            out.append(
                Finding(
                    "DF831",
                    f"{p.title} {text}; nothing raises, acceptance drops ({rule.source})",
                    details={"rule": rule.name, "source": rule.source},
                )
            )
        elif text:
            out.append(
                Finding(
                    "DF815",
                    f"{p.title} {text}; nothing raises, acceptance drops ({rule.source})",
                    field=f"dflash_config.{rule.name.split('.')[-1]}",
                    details={"key": rule.name, "source": rule.source},
                )
            )
    return out


def _diverges(p: Profile, d: Drafter) -> list[Finding]:
    out = []
    for rule in p.divergences:
        text = rule.check(d)
        if text:
            out.append(
                Finding(
                    rule.code,
                    f"{p.title} {text} ({rule.source})",
                    details={"rule": rule.name, "source": rule.source},
                )
            )
    return out


def _notes(p: Profile, d: Drafter, block: int | None) -> list[Finding]:
    out = [Finding("DF810", f"{p.title}: {n.text} ({n.source})") for n in p.notes]
    for a in p.advisories:
        text = a.check(d)
        if text:
            out.append(Finding("DF810", f"{p.title}: {text} ({a.source})"))
    if p.draft_tokens is not None and block is not None:
        t = p.draft_tokens
        out.append(
            Finding(
                "DF810",
                f"{p.title}: {t.flag} = {t.count(block)} ({t.text}, block_size = {block}; {t.source})",
            )
        )
    return out


# verify errors that only some engines hit; every other error code is one every engine hits (a file it
# cannot read, a geometry no loader builds, a tensor set no loader fills)
ONLY_FOR: dict[str, Callable[[Profile], bool]] = {
    # speculators_config.verifier is read by speculators' own reload only (vLLM maps the flat keys itself)
    "DF130": lambda p: p.engine == "speculators",
    # another drafter (DSpark, EAGLE-3): every engine's verdict is `unsupported` (DF800) already
    "DF304": lambda p: False,
}


def hits(p: Profile, f: Finding) -> bool:
    """Whether a verify error stops this engine from loading the checkpoint. A finding that names its engines
    (details["engines"]: profile ids, engines/layouts.py) stops those only."""
    if f.severity != "error":
        return False
    named = (f.details or {}).get("engines")
    if isinstance(named, list):
        return p.id in named
    only = ONLY_FOR.get(f.code)
    return only is None or only(p)


def blocked(p: Profile, d: Drafter, errors: Iterable[Finding]) -> Finding | None:
    """DF813: the verify errors this engine would hit, as one reason naming their codes."""
    hit = [f for f in errors if hits(p, f)]
    if not hit:
        return None
    codes = sorted({f.code for f in hit})
    first = hit[0]
    where = first.field or first.tensor or first.file
    return Finding(
        "DF813",
        f"{p.title} cannot load it: verify reports {', '.join(codes)} "
        f"({first.code}{' ' + where if where else ''}: {first.message}). Fix these first "
        f"(`dflash2-ckpt verify {d.path}` lists them all)",
        details={"codes": codes},
    )


def refused(p: Profile, d: Drafter, r: Refusal, complaint: str) -> Finding:
    """A refusal's finding; where a conversion writes the drafter without what is refused, its command
    (details: command, to, rule - what convert/advice.py checks)."""
    to = r.convert_to(d) if r.convert_to is not None else None
    if to is None:
        return Finding(r.code, f"{p.title} refuses it: {complaint} ({r.source})")
    cmd = conversion_command(d, to)
    return Finding(
        r.code,
        f"{p.title} refuses it: {complaint}; `{cmd}` writes them so{target_note(d, to)} ({r.source})",
        details={"command": cmd, "to": to, "rule": r.name},
    )


def judge(p: Profile, d: Drafter, errors: Iterable[Finding] = ()) -> EngineVerdict:
    """`errors`: the checkpoint's verify findings; an error this engine would hit fails it before anything
    else (a GGUF's own DF9xx findings are not a reason for an engine that reads no GGUF: its format is)."""
    if d.dialect == "gguf" and "gguf" not in p.reads:
        # the GGUF family's errors (DF9xx) are llama.cpp's rules: an engine that never reads the file is
        # judged by the format (needs-conversion) or its drafter versions, not by them
        errors = [e for e in errors if not e.code.startswith("DF9")]
    sibling = dspark_served(p, d)
    if sibling is not None:
        return EngineVerdict(p, "not-validated", (sibling,), None)
    stop = blocked(p, d, errors)
    if stop is not None:
        return EngineVerdict(p, "fails", (stop,), None)
    if d.version is None:
        return EngineVerdict(p, "unsupported", (Finding("DF800", f"{p.title}: not a DFlash drafter"),), None)
    if not p.verified:
        return EngineVerdict(
            p,
            "unverified",
            (
                Finding(
                    "DF841",
                    f"{p.title} ships compiled code only, so what it does with this DFlash {d.version} drafter "
                    f"is not checked: try it ({p.sources[0].source})",
                ),
            ),
            None,
        )
    broken = [b for b in p.breakages if d.version in b.versions]
    if d.version not in p.drafts and not (broken and d.dialect in p.reads):
        has = (
            ", only " + " and ".join(f"DFlash {v}" for v in sorted(p.drafts))
            if p.drafts
            else " (no DFlash at all)"
        )
        return EngineVerdict(
            p,
            "unsupported",
            (Finding("DF800", f"{p.title} has no DFlash {d.version} drafter{has} ({p.sources[0].source})"),),
            None,
        )
    fmt = _format(p, d)
    if fmt is not None:
        return EngineVerdict(p, fmt[0], (fmt[1],), None)
    fails = [
        Finding(
            "DF802",
            f"{p.title} fails on every DFlash {d.version} {d.dialect} drafter"
            f"{'' if d.version in p.drafts else ' (it has no DFlash ' + d.version + ')'}; no checkpoint "
            f"can fix it: `{b.error}` ({b.source})",
        )
        for b in broken
    ]
    for r in p.requires + p.constraints:
        complaint = r.check(d)
        if complaint:
            fails.append(refused(p, d, r, complaint))
    layout = layout_findings(p, d)  # architecture name, draft-position layout, draft-token count
    fails += [f for f in layout if f.severity == "error"]
    quant = _quant(p, d)
    fails += [f for f in quant if f.severity == "error"]
    degraded = _causality(p, d) + _silent_defaults(p, d) + [f for f in quant if f.severity == "warning"]
    degraded += _ignored(p, d) + _diverges(p, d) + [f for f in layout if f.severity == "warning"]
    block = d.spec.block_size if d.spec is not None else None
    notes = [f for f in quant if f.severity == "info"] + _notes(p, d, block)
    if fails:
        return EngineVerdict(p, "fails", tuple(fails + degraded), None)
    serve = p.serve(d, block) if p.serve is not None else None
    return EngineVerdict(p, "degraded" if degraded else "loads", tuple(degraded + notes), serve)
