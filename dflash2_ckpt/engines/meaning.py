"""The drafter each engine would build from a checkpoint, as data, and what a conversion changes in it.

A conversion is only exact when no engine computes something else afterwards. For every profile this
module resolves what that engine runs with (per-layer causality and window, taps as it numbers them,
block size and speculative tokens, mask id, vocabulary, V scale, attention sinks, RoPE, norm eps, the
tensor set after the name mappers) from the source and from the output, and compares them:

- an engine that reads both sides must build the same drafter from both; where it does not, the
  difference is a *repair* when the output's value is what the source means (an engine that misread the
  source reads the output right) and a *change* otherwise;
- the meaning itself (each dialect read by its own reference reader: z-lab for nested, speculators for
  flat, the transformers assistant class for the assistant export, llama.cpp for GGUF) must not change,
  which is what carries a conversion across formats no single engine reads both of.

Every conversion calls `check()` before it writes and refuses (MeaningChangedError) on a change the user did
not name; `convert --dry-run` and `diff` on configs render the same comparison.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from ..errors import MeaningChangedError
from ..formats.families import RICURSIVE, nope_layers
from ..formats.spec import DraftSpec
from . import causality as rules
from .attention_keys import declares_sinks, runs_with, value_scale
from .judge import applies, effective_value
from .profile import Default, Drafter, Profile
from .vllm_families import READS_NO_ROPE

# the fields compared, in display order; `--accept-changes` names them (optionally as ENGINE:FIELD)
FIELDS = (
    "causal",
    "window",
    "taps",
    "block_size",
    "speculative_tokens",
    "mask_token_id",
    "vocab",
    "v_scale",
    "sinks",
    "rope",
    "norm_eps",
    "nope",
    "tensors",
)
MEANING = "meaning"  # the row of the dialects' own reference readers


def meant_causality(spec: DraftSpec) -> tuple[bool, ...]:
    """What the checkpoint means, per layer: its own dialect's reference reader."""
    if spec.dialect == "assistant":
        return rules.transformers_assistant(spec)
    if spec.dialect == "gguf":
        return rules.gguf(spec) or ()
    return rules.intended(spec)


def _windows(spec: DraftSpec, reads_swa: bool = True) -> tuple[int | None, ...]:
    """Each layer's window, None for full attention. With the MiMo keys (read as vLLM reads them:
    released.VLLM_USE_SWA, VLLM_SWA_WINDOW) use_swa slides every layer of an all-full layer_types and
    swa_window_size sets the window; an engine that ignores them (`reads_swa` false) runs layer_types."""
    types: tuple[str | None, ...] = spec.layer_types
    window = spec.sliding_window
    if reads_swa and spec.dialect in ("nested", "gguf"):
        extra = spec.drafter_extra
        window = extra.get("swa_window_size") or window
        if extra.get("use_swa") and "sliding_attention" not in types:
            types = ("sliding_attention",) * spec.num_hidden_layers
    return tuple(window if t == "sliding_attention" else None for t in types)


def _rope(spec: DraftSpec, theta: Any) -> Any:
    scaling = dict(spec.rope_scaling or {})
    if scaling.get("rope_type") in (None, "default") and set(scaling) <= {"rope_type"}:
        scaling = {}
    return [theta, scaling or None]


def _meant_attention(d: Drafter) -> tuple[float, bool]:
    """The V scale and sinks the checkpoint means (engines/attention_keys.py reads them): the nested and GGUF
    forms have a place for them; in a flat config no reader has (vLLM's speculators mapping builds
    dflash_config from a fixed key list: released.VLLM_FLAT_NO_V_SCALE)."""
    if d.dialect not in ("nested", "gguf"):
        return 1.0, False
    return value_scale(d) or 1.0, declares_sinks(d)


def _vocab(d: Drafter) -> Any:
    spec = d.spec
    assert spec is not None
    reduced = any(n.split(".")[0] in ("d2t", "t2d") for n in d.tensors)
    draft = spec.drafter_extra.get("draft_vocab_size")
    return {
        "size": spec.vocab_size,
        "draft": draft if reduced and isinstance(draft, int) else None,
        "reduced": reduced,
    }


Names = Callable[[Drafter], Iterable[str]]


def _stored(d: Drafter) -> Iterable[str]:
    return d.tensors


def _reads(p: Profile, d: Drafter) -> bool:
    return d.spec is not None and d.dialect in p.reads and d.version in p.drafts


def _value(p: Profile, d: Drafter, key: str) -> Any:
    declared = [df for df in p.defaults if df.key == key and applies(df, d)]
    return effective_value(d, declared[0] if declared else Default(key, None, ""))


def built(p: Profile, d: Drafter, names: Names = _stored) -> dict[str, Any] | None:
    """The drafter `p` builds from `d`, field by field; None when `p` does not read this format."""
    if not _reads(p, d):
        return None
    spec = d.spec
    assert spec is not None
    causal = p.causality(spec) if p.causality is not None else None
    block = _value(p, d, "block_size")
    taps = _value(p, d, "target_layer_ids")
    attention = runs_with(p, d)
    ignores = {r.name for r in p.ignores}
    shift = p.tap_offset.of(d.version, d.config)
    if taps is not None and shift:
        taps = [t + shift for t in taps]  # the layers it taps (llama.cpp numbers layer inputs: +1)
    return {
        "causal": None if causal is None else list(causal),
        "window": list(_windows(spec, "dflash_config.use_swa" not in ignores)),
        "taps": taps,
        "block_size": block,
        "speculative_tokens": p.draft_tokens.count(block)
        if p.draft_tokens and isinstance(block, int)
        else None,
        "mask_token_id": _value(p, d, "mask_token_id"),
        "vocab": _vocab(d),
        "v_scale": attention["attention_value_scale"]["engine"],
        "sinks": attention["attention_sink_bias"]["engine"],
        "rope": _rope(spec, _value(p, d, "rope_theta")),
        "norm_eps": spec.rms_norm_eps,
        # the layers it runs without RoPE: only a release with the Ricursive model reads no_rope_layers
        "nope": _nope(d) if any(r.name == READS_NO_ROPE for r in p.constraints) else [],
        "tensors": sorted(set(names(d))),
    }


def _nope(d: Drafter) -> list[int]:
    spec = d.spec
    if spec is None or spec.family != RICURSIVE:
        return []
    return nope_layers(d.config, spec.num_hidden_layers)


def meant(d: Drafter, names: Names = _stored) -> dict[str, Any] | None:
    """The drafter the checkpoint describes, read by its own dialect's reference reader."""
    spec = d.spec
    if spec is None:
        return None
    block = spec.block_size
    v_scale, sinks = _meant_attention(d)
    return {
        "causal": list(meant_causality(spec)),
        "window": list(_windows(spec)),
        "taps": list(spec.target_layer_ids),
        "block_size": block,
        "speculative_tokens": block - 1 if isinstance(block, int) else None,
        "mask_token_id": spec.mask_token_id,
        "vocab": _vocab(d),
        "v_scale": v_scale,
        "sinks": sinks,
        "rope": _rope(spec, spec.rope_theta),
        "norm_eps": spec.rms_norm_eps,
        "nope": _nope(d),
        "tensors": sorted(set(names(d))),
    }


Kind = Literal["changed", "repaired"]


@dataclass(frozen=True)
class Change:
    engine: str  # a profile id, or "meaning"
    field: str
    source: Any
    output: Any
    kind: Kind

    def named_by(self, accepted: Iterable[str]) -> bool:
        return any(a in (self.field, f"{self.engine}:{self.field}") for a in accepted)

    def text(self) -> str:
        verb = "repaired" if self.kind == "repaired" else "changed"
        return f"{self.engine} {self.field} {verb}: {_short(self.source)} -> {_short(self.output)}"

    def to_json(self) -> dict[str, Any]:
        return {
            "engine": self.engine,
            "field": self.field,
            "source": self.source,
            "output": self.output,
            "kind": self.kind,
        }


@dataclass(frozen=True)
class EngineRow:
    engine: str
    reads_source: bool
    reads_output: bool
    changes: tuple[Change, ...] = ()

    @property
    def status(self) -> str:
        if not (self.reads_source or self.reads_output):
            return "reads neither"
        if not self.reads_output:
            return "reads the source only"
        if not self.reads_source:
            return "reads the output only"
        if any(c.kind == "changed" for c in self.changes):
            return "changed"
        return "repaired" if self.changes else "same"

    def to_json(self) -> dict[str, Any]:
        return {
            "engine": self.engine,
            "reads_source": self.reads_source,
            "reads_output": self.reads_output,
            "status": self.status,
            "changes": [c.to_json() for c in self.changes],
        }


@dataclass(frozen=True)
class MeaningCheck:
    rows: tuple[EngineRow, ...]
    accepted: tuple[str, ...] = field(default=())

    @property
    def changes(self) -> list[Change]:
        return [c for r in self.rows for c in r.changes]

    @property
    def refused(self) -> list[Change]:
        """Changes (not repairs) the user did not name."""
        return [c for c in self.changes if c.kind == "changed" and not c.named_by(self.accepted)]

    def to_json(self) -> dict[str, Any]:
        return {
            "fields": list(FIELDS),
            "accepted": list(self.accepted),
            "refused": [c.to_json() for c in self.refused],
            "engines": [r.to_json() for r in self.rows],
        }


def _short(v: Any, at_most: int = 60) -> str:
    if isinstance(v, list) and v and all(isinstance(x, bool) for x in v):
        kinds = {"causal" if x else "bidirectional" for x in v}
        return kinds.pop() if len(kinds) == 1 else "/".join("C" if x else "B" for x in v)
    text = "absent" if v is None else repr(v)
    return text if len(text) <= at_most else text[: at_most - 3] + "..."


def _tensor_change(a: list[str], b: list[str]) -> tuple[Any, Any]:
    """Only the names that differ, so a message names what is lost or gained."""
    sa, sb = set(a), set(b)
    return sorted(sa - sb), sorted(sb - sa)


def _compare(
    engine: str, a: Mapping[str, Any], b: Mapping[str, Any], truth: Mapping[str, Any] | None
) -> list[Change]:
    out = []
    for f in FIELDS:
        if a[f] == b[f]:
            continue
        kind: Kind = "repaired" if truth is not None and b[f] == truth[f] else "changed"
        va, vb = _tensor_change(a[f], b[f]) if f == "tensors" else (a[f], b[f])
        out.append(Change(engine, f, va, vb, kind))
    return out


def compare(
    source: Drafter,
    output: Drafter,
    profiles: Sequence[Profile],
    accepted: Iterable[str] = (),
    names: Names = _stored,
) -> MeaningCheck:
    """Every engine's drafter from `source` against the one from `output`, and the meaning row. `names`:
    the tensor set a drafter is made of, under the names the loaders map it to (checkpoint/layout.py
    canonical_names: variants resolved, target copies left out); the stored names by default."""
    truth = meant(source, names)
    rows = []
    after = meant(output, names)
    if truth is not None and after is not None:
        rows.append(EngineRow(MEANING, True, True, tuple(_compare(MEANING, truth, after, None))))
    for p in profiles:
        a, b = built(p, source, names), built(p, output, names)
        changes = _compare(p.id, a, b, truth) if a is not None and b is not None else []
        rows.append(EngineRow(p.id, a is not None, b is not None, tuple(changes)))
    return MeaningCheck(tuple(rows), tuple(accepted))


def check(
    source: Drafter, output: Drafter, accepted: Iterable[str] = (), names: Names = _stored
) -> MeaningCheck:
    """compare() against every profile; raises MeaningChangedError on a change the user did not name."""
    # not at module level: a PROFILES name here would make this module an engine module to the registry
    from .registry import PROFILES

    result = compare(source, output, tuple(p for p in PROFILES if p.meaning_check), accepted, names)
    bad = result.refused
    if bad:
        fields = ",".join(sorted({c.field for c in bad}))
        raise MeaningChangedError(
            "the conversion would change what engines compute: "
            + "; ".join(c.text() for c in bad[:8])
            + (f" and {len(bad) - 8} more" if len(bad) > 8 else ""),
            hint=f"fix the source so it says what it means, or name the change with --accept-changes {fields}",
            meaning=result.to_json(),
        )
    return result


def accepted_fields(names: Iterable[str]) -> tuple[str, ...]:
    """Validates `--accept-changes` entries (FIELD or ENGINE:FIELD); raises ValueError on an unknown field."""
    out = []
    for n in names:
        f = n.rpartition(":")[2]
        if f not in FIELDS:
            raise ValueError(f"unknown field {f!r} in --accept-changes; fields: {', '.join(FIELDS)}")
        out.append(n)
    return tuple(out)
