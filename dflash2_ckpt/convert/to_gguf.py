"""HF drafter (nested or flat) -> one GGUF file for llama.cpp (docs/engines.md, GGUF).

plan (headers only: names, ggml types, offsets) -> header and metadata through the gguf package's
GGUFWriter -> tensor bytes copied from the source in the kernel when the type is kept (exact: only the
metadata changes, the shape is ne reversed), computed otherwise (f16 / f32 casts, q8_0 via the gguf
package, one tensor in memory at a time) -> every write checked against the plan as it happens (pieces.py)
-> the file re-opened as a GGUF drafter: same DraftSpec as the source, no new error finding -> renamed into
place. The destination is complete or absent.
"""

from __future__ import annotations

import json
import math
import os
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from gguf import GGMLQuantizationType, GGUFWriter, LlamaFileType

from ..checkpoint import Checkpoint, open_checkpoint
from ..checkpoint.layout import draft_vocab
from ..checkpoint.target import read_target
from ..checks.context import CheckContext
from ..checks.gguf import EMITS as GGUF_EMITS
from ..checks.gguf import gguf_findings
from ..checks.pairing import borrow_target_vocab, target_text_config
from ..checks.suite import run_checks
from ..engines.causality import intended as intended_causality
from ..errors import ConversionError, ConversionUsageError
from ..findings import Finding
from ..formats import gguf_names as N
from ..formats.gguf_spec import spec_metadata
from ..formats.spec import CausalityKeys, DraftSpec
from ..sources.dense import from_float32, to_float32
from ..sources.gguf_header import tensor_nbytes
from ..usecases.verify import verify
from . import gguf_vocab as V
from . import needs_vocab, refuse_findings
from .gguf_attention import gguf_view
from .gguf_dtypes import record
from .gguf_exact import gguf_differences
from .gguf_pack import splice, take_long_arrays
from .gguf_tokenizer import from_gguf, from_target_dir
from .meaning import check_drafters, gguf_drafter, source_drafter
from .pieces import Piece, write_pieces
from .plan import refuse_family_change, refuse_source, tensor_fate
from .regressions import refuse_new_errors
from .report import ConvertReportBase
from .staging import check_overlap, claim_destination, exists_error, fsync_dir, staging_area
from .tokenizer_record import target_fingerprint

OUTTYPES = ("bf16", "f16", "f32", "q8_0")
_TYPE = {
    "bf16": GGMLQuantizationType.BF16,
    "f16": GGMLQuantizationType.F16,
    "f32": GGMLQuantizationType.F32,
    "q8_0": GGMLQuantizationType.Q8_0,
    "BF16": GGMLQuantizationType.BF16,
    "F16": GGMLQuantizationType.F16,
    "F32": GGMLQuantizationType.F32,
}
_FILE_TYPE = {
    GGMLQuantizationType.BF16: LlamaFileType.MOSTLY_BF16,
    GGMLQuantizationType.F16: LlamaFileType.MOSTLY_F16,
    GGMLQuantizationType.F32: LlamaFileType.ALL_F32,
    GGMLQuantizationType.Q8_0: LlamaFileType.MOSTLY_Q8_0,
}
DEFAULT_CONTEXT = 32768
# llama.cpp-loader rules the HF source can break without being wrong as a checkpoint: reported, not refused
_REPORT_ONLY = frozenset({"DF907"})


@dataclass(frozen=True)
class GGUFTensorPlan:
    src_name: str
    gguf_name: str
    src_dtype: str
    out_type: GGMLQuantizationType
    shape: tuple[int, ...]  # HF shape
    file: str
    begin: int
    end: int
    offset: int = 0  # relative to the data section, filled by the layout
    data: bytes | None = None  # computed bytes (d2t as absolute ids), written as they are

    @property
    def exact(self) -> bool:
        return self.out_type.name == self.src_dtype and self.data is None

    @property
    def out_bytes(self) -> int:
        return tensor_nbytes(self.out_type, tuple(reversed(self.shape)))


@dataclass
class GGUFConversionReport(ConvertReportBase):
    kind: ClassVar[str] = "convert-gguf"  # the reporters' text layout (report/text_gguf.py)

    src: str
    dst: str
    from_dialect: str
    version: str
    outtype: str
    tensors: list[GGUFTensorPlan]
    metadata_keys: int
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
            **self.json_head(self.from_dialect, "gguf"),
            "outtype": self.outtype,
            "written": self.written,
            "tensors_verified": self.tensors_verified,
            "exact_tensors": sum(t.exact for t in self.tensors),
            "converted_tensors": sum(not t.exact for t in self.tensors),
            "bytes_written": sum(t.out_bytes for t in self.tensors),
            "metadata_keys": self.metadata_keys,
            "tensors": [
                {
                    "name": t.src_name,
                    "to": t.gguf_name,
                    "from_type": t.src_dtype,
                    "type": t.out_type.name,
                    "bytes": t.out_bytes,
                }
                for t in self.tensors
            ],
            "notes": self.notes,
            "findings": [f.to_json() for f in self.findings],
            **self.json_tail(),
        }


def _out_type(
    outtype: str | None, src_dtype: str, gguf_name: str, shape: tuple[int, ...]
) -> GGMLQuantizationType:
    if gguf_name.endswith(".attn_sinks.weight"):
        return (
            GGMLQuantizationType.F32
        )  # ggml_soft_max_add_sinks asserts F32 (llama.cpp b11434:ggml/src/ggml.c)
    if outtype is None:
        return _TYPE[src_dtype]
    want = _TYPE[outtype]
    # as llama.cpp's converter does for every --outtype (llama.cpp b11434:conversion/base.py, checked by
    # tests/llama_cpp/test_conformance.py): vectors and conv base kernels stay F32
    if want != GGMLQuantizationType.F32 and (len(shape) < 2 or gguf_name.endswith("_conv_base")):
        return GGMLQuantizationType.F32
    if want == GGMLQuantizationType.Q8_0 and shape[-1] % 32:
        return GGMLQuantizationType.F32  # rows that are not whole blocks
    return want


def plan_tensors(ckpt: Checkpoint, outtype: str | None) -> tuple[list[GGUFTensorPlan], list[str]]:
    assert ckpt.spec is not None
    dv = draft_vocab(ckpt.spec)
    own = {V.HEAD_HF: V.HEAD_GGUF, V.D2T: V.D2T} if dv is not None else {}
    out, notes, seen = [], [], set()
    for shard, header in ckpt.headers.items():
        for t in header.tensors:
            if dv is not None and t.name == V.T2D:
                notes.append(
                    f"dropped {t.name} ({t.nbytes:,} B): llama.cpp reads no t2d (its converter drops it); "
                    "converting back rebuilds it from d2t"
                )
                continue
            hf, reason = (t.name, "") if t.name in own else tensor_fate(t.name)
            if hf is None:
                notes.append(f"dropped {t.name} ({t.nbytes:,} B): {reason}")
                continue
            if t.name == V.D2T and dv is not None:
                # the HF offsets as the absolute ids llama.cpp scatters the draft logits to
                data = V.absolute(
                    ckpt.read_counted(shard, t.begin, t.nbytes), _t2d(ckpt), ckpt.spec.vocab_size, ckpt.label
                )
                out.append(
                    GGUFTensorPlan(
                        t.name,
                        V.D2T,
                        t.dtype,
                        GGMLQuantizationType.I64,
                        t.shape,
                        shard,
                        t.begin,
                        t.end,
                        data=data,
                    )
                )
                seen.add(V.D2T)
                continue
            if t.dtype not in ("BF16", "F16", "F32"):
                raise ConversionError(
                    f"{t.name} is {t.dtype}; only BF16 / F16 / F32 drafters convert to GGUF",
                    hint="convert the unquantized drafter, then pick --outtype",
                )
            gg = own.get(t.name) or N.hf_to_gguf(hf)
            if gg is None:
                raise ConversionError(
                    f"{t.name} has no llama.cpp tensor name; the GGUF would lose it",
                    hint="remove the tensor, or keep the drafter in an HF dialect",
                )
            if gg in seen:
                raise ConversionError(f"two tensors would both be written as {gg}")
            seen.add(gg)
            out.append(
                GGUFTensorPlan(
                    t.name,
                    gg,
                    t.dtype,
                    _out_type(outtype, t.dtype, gg, t.shape),
                    t.shape,
                    shard,
                    t.begin,
                    t.end,
                )
            )
    if not out:
        raise ConversionError("no tensor would be written", path=ckpt.label)
    if dv is not None and {V.HEAD_GGUF, V.D2T} - seen:
        raise ConversionError(
            f"a reduced draft vocabulary (draft_vocab_size = {dv}) without its own "
            f"{V.HEAD_HF} and {V.D2T}: llama.cpp would score with the target's head",
            path=ckpt.label,
            hint=f"`dflash2-ckpt verify {ckpt.label}` names what is missing",
        )
    return out, notes


def _t2d(ckpt: Checkpoint) -> bytes:
    """t2d's bytes (one per target token), or none when the checkpoint lacks a BOOL t2d."""
    t = ckpt.tensors.get(V.T2D)
    if t is None or t.dtype != "BOOL" or t.nbytes > 64 << 20:
        return b""
    return ckpt.read_counted(t.file, t.begin, t.nbytes)


def _causal(spec: DraftSpec) -> bool | None:
    """The one causal flag llama.cpp reads (absent = non-causal: llama.cpp b11434:common/speculative.cpp),
    written whenever every layer agrees, so the file never relies on the default; None when the layers
    disagree, which one GGUF flag cannot say (compat reports it)."""
    per = intended_causality(spec)
    return per[0] if len(set(per)) == 1 else None


def _context(spec: DraftSpec, target_cfg: dict[str, Any] | None, notes: list[str]) -> int:
    if spec.max_position_embeddings:
        return spec.max_position_embeddings
    tl = target_text_config(target_cfg or {}).get("max_position_embeddings")
    if isinstance(tl, int) and tl > 0:
        notes.append(
            f"{N.KEY_CONTEXT} = {tl} from the target (the drafter config has no max_position_embeddings)"
        )
        return tl
    notes.append(f"{N.KEY_CONTEXT} = {DEFAULT_CONTEXT}: neither the drafter nor the target gives one")
    return DEFAULT_CONTEXT


def _writer(
    path: Path,
    ckpt: Checkpoint,
    spec: DraftSpec,
    tensors: list[GGUFTensorPlan],
    *,
    outtype: str | None,
    target: Path | None,
    target_cfg: dict[str, Any] | None,
    tokenizer_from: Path | None,
    notes: list[str],
    tokenizer_sha256: str | None = None,
) -> GGUFWriter:
    w = GGUFWriter(path, N.ARCH)
    w.add_name(Path(ckpt.label.rstrip("/")).name or "dflash-drafter")
    counts: dict[GGMLQuantizationType, int] = {}
    for t in tensors:
        if len(t.shape) >= 2:
            counts[t.out_type] = counts.get(t.out_type, 0) + 1
    main = max(counts, key=lambda k: counts[k]) if counts else GGMLQuantizationType.F32
    w.add_file_type(int(_FILE_TYPE.get(main, LlamaFileType.GUESSED)))
    if outtype == "q8_0":
        w.add_quantization_version(2)
    for key, value, vtype, sub in spec_metadata(
        spec, context_length=_context(spec, target_cfg, notes), causal=_causal(spec)
    ):
        w.add_key_value(key, value, vtype, sub_type=sub)
    if tokenizer_from is not None:
        notes += from_gguf(w, tokenizer_from, spec.vocab_size)
    elif target is not None:
        notes += from_target_dir(
            w, target, spec.vocab_size, target_text_config(target_cfg or {}).get("model_type")
        )
    if tokenizer_sha256 is not None:  # the tokenizer just written, for verify --target (tokenizer_record.py)
        w.add_string(N.KEY_TOKENIZER_SHA256, tokenizer_sha256)
    # the source files, so that converting back writes them unchanged (llama.cpp ignores unknown keys)
    config_raw = ckpt.read_small("config.json").decode("utf-8")
    w.add_string(N.KEY_SOURCE_CONFIG, config_raw)
    if len(ckpt.headers) == 1:
        meta = next(iter(ckpt.headers.values())).metadata
        if meta:
            w.add_string(N.KEY_SOURCE_ST_META, json.dumps(dict(meta), separators=(",", ":")))
    dtypes = record((t.gguf_name, t.src_dtype, t.out_type.name) for t in tensors)
    if dtypes is not None:
        w.add_string(N.KEY_SOURCE_DTYPES, dtypes)

    for t in tensors:
        w.add_tensor_info(t.gguf_name, t.shape, np.dtype(np.float32), t.out_bytes, raw_dtype=t.out_type)
    return w


def _header_bytes(w: GGUFWriter, scratch: Path) -> bytes:
    """Header + key/values + tensor infos as the gguf package writes them, the long arrays packed once
    (gguf_pack.py), padded to the data alignment."""
    packed = take_long_arrays(w)
    w.write_header_to_file(scratch)
    w.write_kv_data_to_file()
    w.write_ti_data_to_file()
    w.close()
    raw = splice(scratch.read_bytes(), packed)
    scratch.unlink()
    return raw + bytes(-len(raw) % w.data_alignment)


# float32 bytes converted at a time: quantizing a whole 27B fc.weight (500 MiB as float32) held about 1 GiB
_CHUNK_BYTES = 16 << 20


def _encoder(src: Path, t: GGUFTensorPlan) -> Callable[[], Iterator[bytes]]:
    """The tensor in its output type, made only when write_pieces writes it, in runs of whole rows (a cast or
    Q8_0 works row by row, so the runs join to the whole tensor's bytes): memory holds one run at a time."""
    cols = t.shape[-1] if t.shape else 1
    rows = math.prod(t.shape[:-1])
    in_row, out_row = (t.end - t.begin) // max(rows, 1), t.out_bytes // max(rows, 1)
    whole_rows = rows * in_row == t.end - t.begin and rows * out_row == t.out_bytes
    step = max(1, _CHUNK_BYTES // (4 * cols)) if whole_rows else max(rows, 1)

    def chunks() -> Iterator[bytes]:
        with open(src, "rb") as f:
            for r in range(0, max(rows, 1), step):
                k = min(step, max(rows, 1) - r)
                f.seek(t.begin + r * in_row)
                raw = f.read(k * in_row if whole_rows else t.end - t.begin)
                shape = (k, cols) if whole_rows else t.shape
                data = from_float32(to_float32(raw, t.src_dtype, shape), t.out_type.name)
                del raw
                want = k * out_row if whole_rows else t.out_bytes
                if len(data) != want:
                    raise ConversionError(f"internal: {t.gguf_name} encodes to {len(data)} bytes, not {want}")
                yield data
                del data

    return chunks


def _pieces(
    tensors: list[GGUFTensorPlan], src_root: Path, data_start: int, alignment: int
) -> tuple[list[Piece], int]:
    pieces, offset = [], 0
    for t in tensors:
        at = data_start + offset
        if t.data is not None:
            pieces.append(Piece(t.gguf_name, at, None, data=t.data))
        elif t.exact:
            pieces.append(Piece(t.gguf_name, at, src_root / t.file, t.begin, t.end))
        else:
            pieces.append(
                Piece(t.gguf_name, at, None, chunks=_encoder(src_root / t.file, t), length=t.out_bytes)
            )
        offset += -(-t.out_bytes // alignment) * alignment
    return pieces, data_start + offset


def convert_to_gguf(
    src: str | os.PathLike[str],
    dst: str | os.PathLike[str],
    *,
    target: str | os.PathLike[str] | None,
    outtype: str | None = None,
    tokenizer_from: str | os.PathLike[str] | None = None,
    force: bool = False,
    dry_run: bool = False,
    accept_findings: Iterable[str] = (),
    accept_changes: Iterable[str] = (),
) -> GGUFConversionReport:
    """Write SRC (an HF drafter) as the GGUF file DST. Raises ConversionError / SourceError / WriteError."""
    if outtype is not None and outtype not in OUTTYPES:
        raise ValueError(f"outtype must be one of {OUTTYPES}")
    start = time.monotonic()
    ckpt = open_checkpoint(src)
    if ckpt.gguf is not None:
        raise ConversionUsageError(
            "the source is already GGUF; convert it to nested or flat", path=ckpt.label
        )
    refuse_source(ckpt)
    refuse_family_change(ckpt, None, (), "gguf")
    spec = ckpt.spec
    assert spec is not None and ckpt.detection is not None
    if target is None and tokenizer_from is None:
        raise ConversionUsageError(
            "a GGUF drafter carries its target's tokenizer",
            hint="pass --target TARGET_DIR (tokenizer.json) or --tokenizer-from TARGET.gguf",
        )
    target_cfg = None
    if target is not None:
        t = read_target(target)
        target_cfg = t.config
        if target_cfg is None:
            raise ConversionError(f"target {t.label}: {t.error}")

        borrow_target_vocab(ckpt, target_cfg)

    needs_vocab(ckpt)
    src_root = ckpt.source.root or Path(src)
    dst_path = Path(dst).absolute()
    check_overlap(src_root, dst_path, [("target", target), ("tokenizer source", tokenizer_from)])
    tensors, notes = plan_tensors(ckpt, outtype)
    tokenizer_sha256 = target_fingerprint(ckpt, tokenizer_from or target, notes)
    view = gguf_view(spec, list(ckpt.tensors), notes)
    src_drafter = source_drafter(ckpt, None if target is None else str(target))
    planned = gguf_drafter(
        view.with_(causality=CausalityKeys(is_causal=_causal(view))),
        [t.gguf_name for t in tensors],
        src_drafter,
    )
    meaning = check_drafters(src_drafter, planned, accept_changes).to_json()
    report = GGUFConversionReport(
        ckpt.label,
        str(dst),
        ckpt.detection.dialect or "?",
        spec.version,
        outtype or "source dtype",
        tensors,
        0,
        notes,
    )
    report.extra["meaning"] = meaning
    if dry_run:
        report.extra["dry_run"] = True
        return report
    cleaned = claim_destination(dst_path, dst, force)

    source_findings = verify(ckpt).findings  # the source is verified once: to refuse, then to compare
    repaired = {t.src_name for t in tensors if N.hf_to_gguf(t.src_name) != t.gguf_name} | {
        n for n in ckpt.tensors if n not in {t.src_name for t in tensors}
    }
    if draft_vocab(spec) is not None:  # a reduced vocabulary's own head and maps are carried, not repaired
        repaired -= {V.HEAD_HF, V.D2T, V.T2D}
    refuse_findings(ckpt, source_findings, repaired, list(accept_findings))
    with staging_area(dst_path, dst) as tmp:
        w = _writer(
            tmp / "header.part",
            ckpt,
            view,
            tensors,
            outtype=outtype,
            target=Path(target) if target else None,
            target_cfg=target_cfg,
            tokenizer_from=Path(tokenizer_from) if tokenizer_from else None,
            notes=notes,
            tokenizer_sha256=tokenizer_sha256,
        )
        report.metadata_keys = len(w.kv_data[0])
        header = _header_bytes(w, tmp / "header.part")
        pieces, size = _pieces(tensors, src_root, len(header), w.data_alignment)
        out = tmp / dst_path.name
        report.tensors_verified = write_pieces(out, header, size, pieces)
        written = open_checkpoint(out)  # read back once: verified, then compared engine by engine
        report.findings = _verify_written(written, ckpt, view, source_findings, tensors, target_cfg)
        report.extra["meaning"] = check_drafters(
            src_drafter, source_drafter(written), accept_changes
        ).to_json()
        _install_file(out, dst_path, force)
    report.written = True
    report.notes += cleaned
    report.seconds = time.monotonic() - start
    return report


def _verify_written(
    out: Checkpoint,
    source: Checkpoint,
    view: DraftSpec,
    source_findings: tuple[Finding, ...],
    tensors: list[GGUFTensorPlan],
    target_cfg: dict[str, Any] | None,
) -> tuple[Finding, ...]:
    """The written file, opened again as a GGUF drafter: planned tensors, the source's DraftSpec, no new error."""
    if out.gguf is None or out.spec is None:
        bad = "; ".join(f.message for f in out.findings[:2])
        raise ConversionError(f"internal: the written GGUF does not read back as a drafter: {bad}")
    got = {t.name: (t.ggml_type, t.shape) for t in out.gguf.tensors}
    if got != {t.gguf_name: (int(t.out_type), t.shape) for t in tensors}:
        raise ConversionError("internal: the written tensor infos do not describe the planned tensors")
    diffs = gguf_differences(view, out.spec)
    if diffs:
        raise ConversionError("the GGUF would not describe the same drafter: " + "; ".join(diffs))
    layers = target_text_config(target_cfg or {}).get("num_hidden_layers")
    found = [f for f in run_checks(CheckContext(out)) if f.code not in GGUF_EMITS] + gguf_findings(
        out,
        target_layers=layers if isinstance(layers, int) else None,
        reference=source.spec,
        reference_tensors=list(source.tensors),
    )
    refuse_new_errors(source_findings, found, output="the GGUF", source="the source", exempt=_REPORT_ONLY)
    return tuple(found)


def _install_file(tmp: Path, dst: Path, force: bool) -> None:
    if force:
        os.replace(tmp, dst)  # atomic: the old file stays until the new one is in place
    else:
        try:
            os.link(tmp, dst)  # fails if DST appeared meanwhile: never clobber without --force
        except FileExistsError:
            raise exists_error(dst) from None
        tmp.unlink()
    fsync_dir(dst.parent)
