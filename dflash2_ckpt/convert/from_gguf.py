"""GGUF drafter -> HF safetensors checkpoint (nested or flat).

BF16 / F16 / F32 tensors are copied byte for byte (only the name and the header change); quantized ones are
dequantized by the gguf package to F32 and reported, since the precision they lost is gone. A tensor stored in
another type than its recorded source dtype is stored in that dtype again when its values fit exactly
(gguf_dtypes.py); a reduced draft vocabulary's d2t goes back to offsets and t2d is rebuilt (gguf_vocab.py). The config is
the source config.json the file carries when we wrote it and it still agrees with the metadata (so a
round trip gives back the very same files), else one written from the metadata. The result is staged,
its writes checked as they happen (pieces.py), checked to describe the same drafter, then renamed into
place; the other dialect goes through the dialect conversion.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Literal

import numpy as np

from ..checkpoint import Checkpoint, open_checkpoint
from ..checks.context import CheckContext
from ..checks.gguf import EMITS as GGUF_EMITS
from ..checks.gguf import bits_per_weight, gguf_findings
from ..checks.suite import run_checks
from ..checks.vocab import bad_target_ids
from ..engines import Drafter
from ..errors import ConversionError, SourceError, SourceFindingsError
from ..findings import Finding, keep
from ..formats import gguf_names as N
from ..formats.parse import load_config, to_spec
from ..formats.spec import DraftSpec
from ..sources.dense import to_float32
from ..sources.gguf_header import GGUFHeader
from ..sources.safetensors_header import DTYPE_BITS, build_header
from . import convert
from . import gguf_vocab as V
from .gguf_attention import as_read_by_llama_cpp
from .gguf_dtypes import narrow, recorded
from .gguf_exact import gguf_differences
from .meaning import check_drafters, source_drafter
from .pieces import Piece, write_pieces
from .regressions import refuse_new_errors
from .report import ConvertReportBase
from .staging import check_overlap, claim_destination, install, staging_area

_DENSE = ("F32", "F16", "BF16")
_DTYPE_NAMES = {"F32": "float32", "F16": "float16", "BF16": "bfloat16"}


@dataclass
class FromGGUFReport(ConvertReportBase):
    kind: ClassVar[str] = "convert-gguf"  # the reporters' text layout (report/text_gguf.py)

    src: str
    dst: str
    to: str
    version: str
    config_source: str  # "embedded" or "metadata"
    tensors: list[dict[str, Any]]
    notes: list[str]
    findings: tuple[Finding, ...] = ()
    written: bool = False
    tensors_verified: int = 0
    seconds: float = 0.0
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def subject(self) -> str:
        return self.src

    def to_json(self) -> dict[str, Any]:
        return {
            **self.json_head("gguf", self.to),
            "config_source": self.config_source,
            "written": self.written,
            "tensors_verified": self.tensors_verified,
            "exact_tensors": sum(t["exact"] for t in self.tensors),
            "dequantized_tensors": sum(not t["exact"] for t in self.tensors),
            "restored_tensors": sum(bool(t.get("restored")) for t in self.tensors),
            "tensors": self.tensors,
            "notes": self.notes,
            "findings": [f.to_json() for f in self.findings],
            **self.json_tail(),
        }


def nested_config(spec: DraftSpec, dtype: str) -> dict[str, Any]:
    """A nested-dialect config.json for a DraftSpec read from GGUF metadata (keys the file does not carry,
    such as num_target_layers, are left out rather than guessed)."""
    arch = "DFlash2DraftModel" if spec.version == "v2" else "DFlashDraftModel"
    rope: dict[str, Any] = {"rope_theta": spec.rope_theta, "rope_type": "default"}
    rope.update({("rope_type" if k == "type" else k): v for k, v in (spec.rope_scaling or {}).items()})
    cfg: dict[str, Any] = {
        "architectures": [arch],
        "model_type": "qwen3",
        "hidden_size": spec.hidden_size,
        "intermediate_size": spec.intermediate_size,
        "num_hidden_layers": spec.num_hidden_layers,
        "num_attention_heads": spec.num_attention_heads,
        "num_key_value_heads": spec.num_key_value_heads,
        "head_dim": spec.head_dim,
        "vocab_size": spec.vocab_size,
        "rms_norm_eps": spec.rms_norm_eps,
        "hidden_act": "silu",
        "attention_bias": spec.attention_bias,
        "rope_parameters": rope,
    }
    if spec.max_position_embeddings:
        cfg["max_position_embeddings"] = spec.max_position_embeddings
    if all(t is not None for t in spec.layer_types):
        cfg["layer_types"] = list(spec.layer_types)
    if spec.sliding_window:
        cfg["sliding_window"] = spec.sliding_window
    if spec.target_hidden_size:
        cfg["target_hidden_size"] = spec.target_hidden_size
    if spec.causality.is_causal is not None:
        cfg["is_causal"] = spec.causality.is_causal
    cfg["dtype"] = dtype
    dc: dict[str, Any] = {"target_layer_ids": list(spec.target_layer_ids)}
    for k in (
        "mask_token_id",
        "block_size",
        "conv_kernel_size",
        "conv_group_size",
        "selector_rank",
        "selector_top_k",
        "final_logit_softcapping",
    ):
        if getattr(spec, k) is not None:
            dc[k] = getattr(spec, k)
    if spec.causality.is_causal is not None:
        dc["causal"] = spec.causality.is_causal
    for k in ("input_embedding_scale", "output_multiplier"):
        if getattr(spec, k) != 1.0:
            dc[k] = getattr(spec, k)
    if spec.drafter_extra.get("attention_sink_bias") is True:  # blk.N.attn_sinks.weight in the file
        dc["attention_sink_bias"] = True
    if spec.drafter_extra.get("attention_value_scale") is not None:  # dflash.attention.value_scale
        dc["attention_value_scale"] = spec.drafter_extra["attention_value_scale"]
    cfg["dflash_config"] = dc
    return cfg


def gguf_config(h: GGUFHeader, spec: DraftSpec, dtype: str, notes: list[str]) -> tuple[bytes, str]:
    raw = h.get(N.KEY_SOURCE_CONFIG)
    if isinstance(raw, str):
        try:
            data = raw.encode("utf-8")
        except UnicodeEncodeError:
            data = b""
        cfg, _ = load_config(data) if data else (None, [])
        emb = to_spec(cfg)[0] if cfg is not None else None
        if emb is not None and not gguf_differences(as_read_by_llama_cpp(emb), spec):
            return data, "embedded"
        notes.append(
            f"the source config.json carried in {N.KEY_SOURCE_CONFIG} no longer matches the GGUF "
            "metadata (edited after conversion?); the config is written from the metadata"
        )
    return (json.dumps(nested_config(spec, dtype), indent=2) + "\n").encode(), "metadata"


def _tensors(
    ckpt: Checkpoint, h: GGUFHeader, root: Path, notes: list[str], *, decide: bool
) -> tuple[list[tuple[str, str, tuple[int, ...]]], list[Piece], list[dict[str, Any]]]:
    """(safetensors entries, pieces with their data offsets still to place, report rows). A tensor the GGUF
    stores in another type than its recorded source dtype gets that dtype back when its values allow
    (gguf_dtypes.py); `decide` False (a dry run) reads no tensor data and plans the restore unchecked."""
    entries: list[tuple[str, str, tuple[int, ...]]] = []
    sources: list[Piece] = []
    rows: list[dict[str, Any]] = []
    source_dtypes = recorded(h.get(N.KEY_SOURCE_DTYPES), notes)
    kept: list[str] = []
    reduced = any(t.name == V.D2T for t in h.tensors)
    for t in h.tensors:
        if reduced and t.name == V.D2T:
            _vocab_maps(ckpt, h, t, entries, sources, rows)
            notes.append(
                "d2t holds absolute target ids in the GGUF: written back as speculators' offsets (target "
                "id - draft id), and t2d rebuilt from it"
            )
            continue
        hf = V.HEAD_HF if reduced and t.name == V.HEAD_GGUF else N.gguf_to_hf(t.name)
        if hf is None:
            raise ConversionError(
                f"{t.name} is not a DFlash tensor llama.cpp names; converting would lose it", path=ckpt.label
            )
        dense = t.type_name in _DENSE
        want = source_dtypes.get(t.name, t.type_name)
        # widening to F32 is always exact; narrowing only when every value fits (read to know), and never
        # for a quantized tensor, whose values are the quantized ones, not the source's (F32, as noted below)
        if want != t.type_name and want != "F32":
            if not dense:
                want = t.type_name
            elif decide and not _fits(ckpt, h.file, t, want):
                kept.append(f"{t.name} ({t.type_name}, source {want})")
                want = t.type_name
        dtype = want if want in _DENSE else "F32"
        entries.append((hf, dtype, t.shape))
        if dtype == t.type_name:
            sources.append(Piece(hf, 0, root / h.file, t.begin, t.end))
        else:  # recast when written (never by a dry run), one run of rows in memory at a time
            sources.append(
                Piece(
                    hf,
                    0,
                    None,
                    chunks=_recast(ckpt, h.file, t, dtype),
                    length=math.prod(t.shape) * DTYPE_BITS[dtype] // 8,
                )
            )
        row = {
            "name": t.name,
            "to": hf,
            "type": t.type_name,
            "dtype": dtype,
            "exact": dense,
            "bits_per_weight": round(bits_per_weight(t.ggml_type), 3),
        }
        if dense and dtype != t.type_name and dtype == source_dtypes.get(t.name):
            row["restored"] = True
        rows.append(row)
    restored = sum(bool(r.get("restored")) for r in rows)
    if restored:
        notes.append(
            f"{restored} tensor(s) stored in the GGUF in another type than their source dtype are "
            f"written in that dtype again ({N.KEY_SOURCE_DTYPES})"
            + ("" if decide else "; a narrowing restore is checked value by value when written")
        )
    if kept:
        notes.append(
            f"{len(kept)} tensor(s) are not written in their recorded source dtype: their values are not "
            f"exactly representable there ({', '.join(kept[:3])}{', ...' if len(kept) > 3 else ''})"
        )
    lossy = [r for r in rows if not r["exact"]]
    if lossy:
        kinds = sorted({str(r["type"]) for r in lossy})
        to = "/".join(sorted({str(r["dtype"]) for r in lossy}))
        notes.append(
            f"{len(lossy)} quantized tensor(s) ({', '.join(kinds)}) dequantized to {to}: the values are "
            "the quantized ones; the precision lost when the file was quantized cannot be recovered"
        )
    return entries, sources, rows


def _vocab_maps(
    ckpt: Checkpoint,
    h: GGUFHeader,
    t: Any,
    entries: list[tuple[str, str, tuple[int, ...]]],
    sources: list[Piece],
    rows: list[dict[str, Any]],
) -> None:
    """d2t (absolute target ids) back as speculators' offsets, and t2d rebuilt from it right after (where
    safetensors puts a BOOL tensor after an I64 one): the source's bytes when the GGUF was made from one."""
    assert ckpt.spec is not None
    vocab = ckpt.spec.vocab_size
    if t.type_name != "I64" or len(t.shape) != 1 or t.nbytes > 64 << 20:
        raise ConversionError(
            f"d2t is {t.type_name} {list(t.shape)}, not the I64 vector llama.cpp reads", path=ckpt.label
        )
    raw = ckpt.source.read_range(h.file, t.begin, t.nbytes)
    ids = np.frombuffer(raw, dtype="<i8")
    why = bad_target_ids(ids, vocab)
    if why is not None:
        raise ConversionError(
            f"d2t is not a draft vocabulary: read as absolute target ids, {why}",
            path=ckpt.label,
            hint=f"`dflash2-ckpt verify {ckpt.label}` explains it (DF218)",
        )
    entries += [(V.D2T, "I64", t.shape), (V.T2D, "BOOL", (vocab,))]
    sources += [Piece(V.D2T, 0, None, data=V.offsets(raw)), Piece(V.T2D, 0, None, data=V.t2d_of(ids, vocab))]
    rows += [
        {
            "name": t.name,
            "to": V.D2T,
            "type": "I64",
            "dtype": "I64",
            "exact": True,
            "bits_per_weight": 64.0,
            "values": "absolute target ids -> offsets (target id - draft id)",
        },
        {
            "name": t.name,
            "to": V.T2D,
            "type": "I64",
            "dtype": "BOOL",
            "exact": True,
            "bits_per_weight": 8.0,
            "values": "rebuilt: true at the target ids d2t holds",
        },
    ]


# float32 bytes recast at a time: gguf's dequantize holds its output twice (the per-group results, then
# their concatenation), so a whole 27B fc.weight (500 MiB as float32) peaked at 1 GiB plus its stored bytes
_CHUNK_BYTES = 16 << 20


def _runs(ckpt: Checkpoint, file: str, t: Any) -> Iterator[np.ndarray[Any, Any]]:
    """The tensor's float32 values in runs of whole rows (a ggml row is whole blocks), read and
    dequantized one run at a time: peak memory is about one run of `_CHUNK_BYTES`, whatever its size."""
    cols = t.shape[-1] if t.shape else 1
    rows = math.prod(t.shape[:-1])
    row_bytes = t.nbytes // rows if rows else 0
    if rows * row_bytes != t.nbytes:
        raise ConversionError(
            f"{t.name}: {t.nbytes} bytes are not {rows} whole rows of {t.type_name}", path=ckpt.label
        )
    step = max(1, _CHUNK_BYTES // (4 * cols))
    for r in range(0, rows, step):
        k = min(step, rows - r)
        raw = ckpt.source.read_range(file, t.begin + r * row_bytes, k * row_bytes)
        values = to_float32(raw, t.type_name, (k, cols))
        del raw
        yield values
        del values  # released before the next run is made


def _fits(ckpt: Checkpoint, file: str, t: Any, dtype: str) -> bool:
    return all(narrow(v, dtype) is not None for v in _runs(ckpt, file, t))


def _recast(ckpt: Checkpoint, file: str, t: Any, dtype: str) -> Callable[[], Iterator[bytes | memoryview]]:
    """The tensor stored as `dtype`, made run by run when write_pieces writes it."""

    def chunks() -> Iterator[bytes | memoryview]:
        for values in _runs(ckpt, file, t):
            # float32 goes out as the array's own bytes, not a copy
            data = values.reshape(-1).view("uint8").data if dtype == "F32" else narrow(values, dtype)
            del values
            if data is None:  # _fits said it would be exact: the file changed under us
                raise ConversionError(f"{t.name} changed while it was converted", path=ckpt.label)
            yield data
            del data

    return chunks


def convert_from_gguf(
    src: str | os.PathLike[str],
    dst: str | os.PathLike[str],
    *,
    to: Literal["nested", "flat"],
    target: str | os.PathLike[str] | None = None,
    verifier_name: str | None = None,
    force: bool = False,
    dry_run: bool = False,
    verifier_architectures: tuple[str, ...] = (),
    accept_findings: Iterable[str] = (),
    accept_changes: Iterable[str] = (),
) -> FromGGUFReport:
    start = time.monotonic()
    check_overlap(Path(src), Path(dst).absolute(), [("target", target)])
    ckpt = open_checkpoint(src)
    h, spec = ckpt.gguf, ckpt.spec
    if h is None:
        bad = [f for f in ckpt.findings if f.code == "DF900"]
        raise SourceError(bad[0].message if bad else "not a GGUF file", path=str(src))
    if spec is None:
        errs = [f for f in gguf_findings(ckpt) if f.severity == "error"]
        raise ConversionError(
            "the GGUF metadata does not describe a DFlash drafter: "
            + "; ".join(f"{f.code} {f.message}" for f in errs[:3]),
            path=str(src),
        )
    root = ckpt.source.root or Path(src).parent
    notes: list[str] = []
    entries, pieces, rows = _tensors(ckpt, h, root, notes, decide=not dry_run)
    dtypes = {d for _, d, s in entries if len(s) >= 2}
    config_bytes, config_source = gguf_config(
        h, spec, _DTYPE_NAMES[dtypes.pop() if len(dtypes) == 1 else "F32"], notes
    )
    if config_source != "embedded" and any(t.name == V.D2T for t in h.tensors):
        # only the flat dialect has a draft vocabulary, and the metadata has none of its other keys
        raise ConversionError(
            "a reduced draft vocabulary (d2t) converts back from the flat config.json the file "
            f"carries ({N.KEY_SOURCE_CONFIG}), and this file carries none that matches it",
            path=ckpt.label,
            hint="convert the HF checkpoint the GGUF was made from, or write its flat config.json by hand",
        )
    report = FromGGUFReport(ckpt.label, str(dst), to, spec.version, config_source, rows, notes)
    src_drafter = source_drafter(ckpt)
    planned = _planned_nested(json.loads(config_bytes), entries, src_drafter)
    report.extra["meaning"] = check_drafters(src_drafter, planned, accept_changes).to_json()
    if dry_run:
        report.extra["dry_run"] = True
        return report
    dst_path = Path(dst).absolute()
    cleaned = claim_destination(dst_path, dst, force)
    meta = _recorded_metadata(h.get(N.KEY_SOURCE_ST_META), report.notes)
    header, spans = build_header(entries, meta)
    placed = [dataclasses.replace(p, out_begin=len(header) + b) for p, (b, _) in zip(pieces, spans)]
    with staging_area(dst_path, dst) as tmp:
        with open(tmp / "config.json", "xb") as f:
            f.write(config_bytes)
            f.flush()
            os.fsync(f.fileno())
        report.tensors_verified = write_pieces(
            tmp / "model.safetensors", header, len(header) + (spans[-1][1] if spans else 0), placed
        )
        staged = _check_staged(tmp, ckpt, spec)
        report.extra["meaning"] = check_drafters(
            src_drafter, source_drafter(staged), accept_changes
        ).to_json()
        if staged.detection is not None and staged.detection.dialect == to:
            report.findings = tuple(run_checks(CheckContext(staged)))
            _refuse_broken(report.findings, ckpt.label, list(accept_findings))
            install(tmp, dst_path, force)
        else:
            inner = convert(
                tmp,
                dst_path,
                to=to,
                target=target,
                verifier_name=verifier_name,
                force=force,
                verifier_architectures=verifier_architectures,
                accept_findings=accept_findings,
                accept_changes=accept_changes,
            )
            report.findings = inner.verify_findings
            report.notes.append(
                f"then converted {staged.detection.dialect if staged.detection else '?'} -> {to}"
            )
    report.written = True
    report.notes += cleaned
    report.seconds = time.monotonic() - start
    return report


def _planned_nested(config: dict[str, Any], entries: list[Any], source: Drafter) -> Drafter:
    """The nested drafter the staged config and tensors will make, before anything is written."""
    new, _ = to_spec(config)
    if new is None:
        raise ConversionError("internal: the written config does not parse")
    return source.converted("nested", new, config, (e[0] for e in entries))


def _refuse_broken(findings: tuple[Finding, ...], label: str, accept: list[str]) -> None:
    """What the safetensors path refuses up front (a source with error findings) is seen here on the
    drafter the GGUF describes, staged: zero dimensions, 0 KV heads and the like fail verify there, and
    nothing is installed unless the caller accepts those codes by name."""

    left = [f for f in findings if f.severity == "error" and not (accept and keep(f.code, accept))]
    if left:
        codes = ",".join(sorted({f.code for f in left}))
        raise SourceFindingsError(
            f"the drafter this GGUF describes has {len(left)} error finding(s) ({codes}); "
            "nothing was converted",
            path=label,
            findings=[f.to_json() for f in left],
            hint=f"fix the GGUF, or accept these with --accept-findings {codes}",
        )


_MAX_META = 1 << 20  # bytes of recorded safetensors metadata; real ones are a few hundred


def _recorded_metadata(raw: Any, notes: list[str]) -> dict[str, str] | None:
    """The source's safetensors __metadata__ recorded in the GGUF, when it is what safetensors allows
    (a flat object of strings); anything else (not JSON, 100k levels deep, a 100k-digit number) is
    dropped with a note, never a crash."""
    if raw is None:
        return None
    meta: Any = None
    if isinstance(raw, str) and len(raw) <= _MAX_META and raw.lstrip().startswith("{"):
        try:
            meta = json.loads(raw)
        except (ValueError, RecursionError):
            meta = None
    if isinstance(meta, dict) and all(isinstance(k, str) and isinstance(v, str) for k, v in meta.items()):
        return meta
    notes.append(
        f"{N.KEY_SOURCE_ST_META} is not a JSON object of strings; the safetensors metadata was not restored"
    )
    return None


def _check_staged(tmp: Path, source: Checkpoint, spec: DraftSpec) -> Checkpoint:
    out = open_checkpoint(tmp)
    if out.spec is None:
        raise ConversionError(
            "internal: the written config does not parse: " + "; ".join(f.message for f in out.findings[:3])
        )
    diffs = gguf_differences(as_read_by_llama_cpp(out.spec), spec)
    if diffs:
        raise ConversionError("the HF checkpoint would not describe the same drafter: " + "; ".join(diffs))
    refuse_new_errors(
        run_checks(CheckContext(source)),
        run_checks(CheckContext(out)),
        output="the converted checkpoint",
        source="the GGUF",
        exempt=GGUF_EMITS,
    )
    return out
