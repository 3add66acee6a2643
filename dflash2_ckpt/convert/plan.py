"""The conversion plan: the destination config, every tensor's fate (copy / rename / drop) with its byte
range, the output shards and their headers, and the other files. Built from headers alone; nothing written.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from ..checkpoint import INDEX, PICKLE_SUFFIXES, Checkpoint
from ..checkpoint.layout import role_of
from ..checks.context import CheckContext
from ..checks.suite import OPENING, run_families
from ..errors import ConversionError, SourceError
from ..findings import Finding
from ..formats.families import MUSE, Family, family_of
from ..formats.parse import to_spec
from ..formats.spec import DraftSpec
from ..sources.safetensors_header import TensorInfo, build_header
from .assistant import assistant_to_nested
from .configs import KeyChange, Verifier, flat_to_nested, nested_to_flat
from .exactness import drafter_differences
from .quant import carry_quantization, module_renames

Dialect = Literal["nested", "flat"]
SourceDialect = Literal["nested", "flat", "assistant"]
# source findings that make the files unreadable (exit 3) or the tensor set ambiguous (refused)
UNREADABLE = ("DF100", "DF601", "DF603", "DF604", "DF607", "DF608")
AMBIGUOUS = ("DF605", "DF606", "DF301", "DF302", "DF303", "DF304", "DF117", "DF112")


def tensor_bytes(tensors: Any, *, dropped: bool) -> int:
    """Bytes of the planned tensors that are dropped (or, with dropped=False, written)."""
    return sum(t.nbytes for t in tensors if (t.action == "drop") == dropped)


@dataclass(frozen=True)
class TensorAction:
    action: Literal["copy", "rename", "drop"]
    name: str
    dst_name: str | None
    file: str
    dst_file: str | None
    dtype: str
    shape: tuple[int, ...]
    begin: int  # absolute byte range in the source file
    end: int
    reason: str = ""

    @property
    def nbytes(self) -> int:
        return self.end - self.begin

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "action": self.action,
            "name": self.name,
            "bytes": self.nbytes,
            "file": self.file,
        }
        if self.action != "drop":
            out.update(to=self.dst_name, dst_file=self.dst_file)
        if self.reason:
            out["reason"] = self.reason
        return out


@dataclass
class OutShard:
    name: str
    source: str  # the source file its bytes come from
    tensors: list[TensorAction]  # in source data order
    metadata: Mapping[str, str] | None
    header: bytes = b""
    offsets: list[tuple[int, int]] = field(default_factory=list)  # absolute [begin, end) in the output file

    @property
    def size(self) -> int:
        return len(self.header) + sum(t.nbytes for t in self.tensors)


@dataclass
class ConversionPlan:
    src: str
    dst: str
    src_dialect: SourceDialect
    to: Dialect
    version: str
    config: dict[str, Any]
    spec: DraftSpec
    new_spec: DraftSpec
    changes: list[KeyChange]
    notes: list[str]
    tensors: list[TensorAction]
    shards: list[OutShard]
    sharded: bool
    index_metadata: dict[str, Any]
    copy_files: list[str]
    skip_files: list[tuple[str, str]]
    source_errors: list[str]

    @property
    def bytes_copied(self) -> int:
        return tensor_bytes(self.tensors, dropped=False)

    @property
    def bytes_dropped(self) -> int:
        return tensor_bytes(self.tensors, dropped=True)

    def index(self) -> dict[str, Any]:
        weight_map = {t.dst_name: s.name for s in self.shards for t in s.tensors}
        meta = dict(self.index_metadata)
        meta["total_size"] = self.bytes_copied
        return {"metadata": meta, "weight_map": dict(sorted(weight_map.items()))}


# the families a refusal reads: what opening found, and the v1/v2 identity
REFUSAL_FAMILIES = (*OPENING, "identity")


def refuse_source(ckpt: Checkpoint, families: Mapping[str, Sequence[Finding]] | None = None) -> list[Finding]:
    """Raise when the source cannot be converted faithfully; otherwise its config and file findings.
    `families` is what verify found on the source (Report.families), so a conversion checks it once;
    without it the families a refusal reads run here, in one pass."""
    if families is None:
        families = run_families(CheckContext(ckpt), only=REFUSAL_FAMILIES)
    opening = [f for name in OPENING for f in families.get(name, ())]
    errs = [f for f in opening if f.severity == "error"]
    bad = [f for f in errs if f.code in UNREADABLE]
    if bad:
        raise SourceError(f"cannot read the source: {bad[0].code} {bad[0].message}", path=ckpt.label)
    det = ckpt.detection
    if det is not None and not det.is_dflash:
        raise ConversionError(
            f"not a DFlash drafter ({det.other or 'no DFlash architecture or dialect'}); nothing to convert",
            path=ckpt.label,
        )
    if ckpt.spec is None:
        why = "; ".join(f"{f.code} {f.message}" for f in errs[:3]) or "the config does not parse"
        raise ConversionError(
            f"the source config is not a valid DFlash config: {why}",
            path=ckpt.label,
            hint=f"run `dflash2-ckpt verify {ckpt.label}`",
        )
    # v1/v2 contradictions (identity) must not be carried over either
    for f in [*errs, *families.get("identity", ())]:
        if f.code in AMBIGUOUS and f.severity == "error":
            raise ConversionError(
                f"{f.code} {f.message}",
                path=ckpt.label,
                hint=f"fix the source first; `dflash2-ckpt verify {ckpt.label}` explains it",
            )
    return opening


def _meaning(family: Family | None) -> str | None:
    """The family as the loaders read it: the Muse assistant alias loads as plain DFlash (qwen3_dflash)."""
    return None if family is None or family.name == MUSE else family.name


def refuse_family_change(
    ckpt: Checkpoint, new_config: Mapping[str, Any] | None, new_names: Sequence[str], to: str
) -> None:
    """A conversion must not drop or reinterpret a DFlash family (formats/families.py, docs/families.md): the
    written config and tensors must name the family the source is, or the engines load another drafter
    (the flat dialect's mapping, for one, always writes DFlash2DraftModel; llama.cpp has no family)."""
    source = ckpt.detection.family if ckpt.detection is not None else None
    if _meaning(source) is None:
        return
    assert source is not None
    written = family_of(new_config, new_names) if new_config is not None else None
    if to == "gguf" or _meaning(written) != _meaning(source):
        reader = "llama.cpp's dflash loader" if to == "gguf" else f"the {to} dialect"
        raise ConversionError(
            f"the source is a drafter of the {source.label} family ({source.architecture}); {reader} has no way "
            f"to say so, and the engines would load the output as another drafter",
            path=ckpt.label,
            hint="serve the source as it is: docs/families.md names the engines that load it",
        )


def tensor_fate(name: str) -> tuple[str | None, str]:
    """(destination name or None to drop, reason), as the role table decides."""
    r = role_of(name)
    if r.rule.fate == "drop":
        return None, r.rule.reason
    return r.canonical, r.rule.reason


def _tensor_actions(ckpt: Checkpoint) -> list[TensorAction]:
    out: list[TensorAction] = []
    taken: dict[str, str] = {}
    for shard, header in ckpt.headers.items():
        for t in header.tensors:
            dst, reason = tensor_fate(t.name)
            if dst is None:
                out.append(
                    TensorAction("drop", t.name, None, shard, None, t.dtype, t.shape, t.begin, t.end, reason)
                )
                continue
            if dst in taken:
                raise ConversionError(
                    f"tensors {taken[dst]} and {t.name} would both be written as {dst}; "
                    "which one the drafter means is ambiguous",
                    hint="remove one of them",
                )
            taken[dst] = t.name
            action: Literal["copy", "rename"] = "rename" if dst != t.name else "copy"
            out.append(
                TensorAction(action, t.name, dst, shard, shard, t.dtype, t.shape, t.begin, t.end, reason)
            )
    return out


def _other_files(ckpt: Checkpoint) -> tuple[list[str], list[tuple[str, str]]]:
    copy, skip = [], []
    shards = set(ckpt.headers)
    auto_map = (ckpt.config or {}).get("auto_map")
    remote = {
        v.split(".")[0] + ".py"
        for v in (auto_map.values() if isinstance(auto_map, dict) else [])
        if isinstance(v, str) and "." in v
    }
    local = ckpt.source.root
    for f in ckpt.source.list_files():
        if f in shards or f in ("config.json", INDEX):
            continue
        if local is not None and not os.path.isfile(os.path.join(local, f)):
            skip.append((f, "not a regular file"))
        elif f.endswith(PICKLE_SUFFIXES) or f.endswith(".gguf") or f.endswith(".safetensors"):
            skip.append((f, "weights outside the safetensors checkpoint are not converted"))
        elif f in remote:
            skip.append((f, "remote code named by auto_map, which is not carried over"))
        else:
            copy.append(f)
    return copy, skip


def _layout_shards(tensors: list[TensorAction], ckpt: Checkpoint) -> list[OutShard]:
    shards = []
    for name, header in ckpt.headers.items():
        kept = [t for t in tensors if t.file == name and t.action != "drop"]
        if not kept:
            continue
        shard = OutShard(name, name, kept, header.metadata)
        shard.header, spans = build_header(
            [(t.dst_name or "", t.dtype, t.shape) for t in kept], header.metadata
        )
        shard.offsets = [(len(shard.header) + b, len(shard.header) + e) for b, e in spans]
        shards.append(shard)
    return shards


def make_plan(
    ckpt: Checkpoint,
    dst: str,
    to: Dialect,
    *,
    verifier: Verifier | None = None,
    num_target_layers: int | None = None,
    families: Mapping[str, Sequence[Finding]] | None = None,
) -> ConversionPlan:
    """The plan from headers alone; `families`: the source's verify findings by family, when computed."""
    opening = refuse_source(ckpt, families)
    spec, config, det = ckpt.spec, ckpt.config, ckpt.detection
    assert spec is not None and config is not None and det is not None
    assert det.dialect in ("nested", "flat", "assistant")  # a GGUF source goes through from_gguf
    if det.dialect == to:
        # nothing to translate: the config is copied as it is; tensor name variants and target copies are
        # still resolved by the role table, like any conversion, and reported
        new = json.loads(json.dumps(config))
        changes: list[KeyChange] = []
        notes = [f"the source is already in the {to} dialect: config.json is copied unchanged"]
    elif det.dialect == "assistant":
        new, changes, notes = assistant_to_nested(config, spec)
        if to == "flat":  # through the nested form, which nested_to_flat already writes exactly
            nested_spec, found = to_spec(new)
            if nested_spec is None:
                raise ConversionError(
                    "internal: the nested form does not parse: " + "; ".join(f.message for f in found)
                )
            new, more, more_notes = nested_to_flat(new, nested_spec, verifier)
            changes, notes = changes + more, notes + more_notes
    elif to == "flat":
        new, changes, notes = nested_to_flat(config, spec, verifier)
    else:
        new, changes, notes = flat_to_nested(config, spec, num_target_layers)
    new_spec, found = to_spec(new)
    if new_spec is None:
        raise ConversionError(
            "internal: the written config does not parse: " + "; ".join(f.message for f in found)
        )
    diffs = drafter_differences(spec, new_spec)
    if diffs:
        raise ConversionError("the conversion would not be exact: " + "; ".join(diffs))
    tensors = _tensor_actions(ckpt)
    refuse_family_change(ckpt, new, [t.dst_name for t in tensors if t.dst_name], to)
    renames = module_renames((t.name, t.dst_name) for t in tensors if t.dst_name)
    changes = changes + carry_quantization(config, new, renames, {n.rpartition(".")[0] for n in ckpt.tensors})
    shards = _layout_shards(tensors, ckpt)
    if not shards:
        raise ConversionError("no tensor would be written", path=ckpt.label)
    for s in shards:
        if len(ckpt.headers) == 1 and ckpt.index is None:
            s.name = s.source if re.fullmatch(r"[^/\\]+\.safetensors", s.source) else "model.safetensors"
    copy, skip = _other_files(ckpt)
    dropped = {t.file for t in tensors} - {s.source for s in shards}
    skip += [(f, "every tensor in it is dropped") for f in sorted(dropped)]
    meta = (ckpt.index or {}).get("metadata")
    index_meta = dict(meta) if isinstance(meta, dict) else {}
    errors = [f"{f.code} {f.message}" for f in opening if f.severity == "error"]
    return ConversionPlan(
        ckpt.label,
        dst,
        det.dialect,
        to,
        spec.version,
        new,
        spec,
        new_spec,
        changes,
        notes,
        tensors,
        shards,
        ckpt.index is not None,
        index_meta,
        copy,
        skip,
        errors,
    )


def planned_infos(plan: ConversionPlan) -> dict[str, TensorInfo]:
    """The destination tensors as the written headers must describe them."""
    return {
        t.dst_name or "": TensorInfo(t.dst_name or "", t.dtype, t.shape, b, e, s.name)
        for s in plan.shards
        for t, (b, e) in zip(s.tensors, s.offsets)
    }
