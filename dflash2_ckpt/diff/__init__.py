"""`diff DERIVED --reference SRC`: every tensor of a derived checkpoint (quantized, re-exported) against its
source, tensor by tensor in bounded memory, with a receipt publishers can pin next to the upload.

Bit-identical dense tensors are compared from their bytes (identical.py: no torch); torch (the [diff] extra)
loads for the first tensor that needs float figures, and dequant.py decodes the quantized formats.
"""

from __future__ import annotations

import hashlib
import math
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from ..checkpoint import gguf_file
from ..errors import MissingDependencyError, SourceError
from ..findings import Finding, Verdict
from ..sources import Source
from ..threads import ThreadChoice
from ..threads import choose as choose_threads
from ..threads import use as use_threads
from .compare import Figures, dtype_noise, dtype_noise_np
from .identical import buffers as raw_buffers
from .identical import identical
from .meaning import config_meaning, meaning_findings
from .sides import SafetensorsSide, Side, TensorMeta, open_side, register_opener

if TYPE_CHECKING:
    import torch


def _open_gguf(path: str | os.PathLike[str] | Source) -> Side | None:
    """A `.gguf` path, or a source (local, Hub) whose checkpoint is a GGUF file; the reader (numpy, gguf,
    torch) loads only then."""
    if isinstance(path, (str, os.PathLike)):
        hit = str(path).endswith(".gguf") and os.path.isfile(path)
    else:
        hit = gguf_file(path, path.list_files()) is not None
    if not hit:
        return None
    from .gguf_side import GGUFSide  # lazy: diff.gguf_side loads only on this path

    return GGUFSide(path)


register_opener(_open_gguf)  # a .gguf file on either side

EMITS: frozenset[str] = frozenset({"DF230", "DF231", "DF232", "DF233"})
__all__ = ["DiffResult", "diff", "register_opener"]

Progress = Callable[[int, int, str], None]  # (done, total, tensor name)


@dataclass
class DiffResult(Verdict):
    """A report kind (dflash2_ckpt.report): kind, subject, findings, to_json; plus the figures."""

    derived: str
    reference: str
    figures: list[Figures]
    seconds: float
    sides: tuple[Side, Side]
    counts: dict[str, int] = field(default_factory=dict)
    threads: dict[str, Any] = field(default_factory=dict)  # the torch thread choice (dflash2_ckpt.threads)
    meaning: dict[str, Any] | None = None  # the configs compared per engine (diff/meaning.py)
    kind: ClassVar[str] = "diff"

    @property
    def subject(self) -> str:
        return f"{self.derived} vs {self.reference}"

    def failed(self, strict: bool = False) -> bool:
        """different / missing tensors, or a config an engine reads differently (DF235); with strict, extra
        tensors too."""
        bad = ("different", "missing", "extra") if strict else ("different", "missing")
        return any(f.verdict in bad for f in self.figures) or bool(meaning_findings(self.meaning))

    @property
    def findings(self) -> list[Finding]:
        out = []
        for f in self.figures:
            if f.verdict == "different":
                out.append(
                    Finding(
                        "DF230",
                        f"{f.name} differs from the reference: {f.reason or 'not the same tensor'}",
                        tensor=f.name,
                        details=f.to_json(),
                    )
                )
            elif f.verdict == "missing":
                out.append(
                    Finding(
                        "DF231",
                        f"{f.name} {list(f.shape)} is in the reference but not in the derived checkpoint",
                        tensor=f.name,
                        details=f.to_json(),
                    )
                )
            elif f.verdict == "extra":
                out.append(
                    Finding(
                        "DF232",
                        f"{f.name} {list(f.shape)} is not in the reference",
                        tensor=f.name,
                        details=f.to_json(),
                    )
                )
        out += meaning_findings(self.meaning)
        noise = [f for f in self.figures if f.verdict == "quantization-noise"]
        if noise:
            worst = max(noise, key=lambda f: f.rel_rms or 0.0)
            out.append(
                Finding(
                    "DF233",
                    f"{len(noise)} tensor(s) within the rounding their scheme predicts; worst "
                    f"{worst.name}: relative RMS error {worst.rel_rms:.3g} (predicted "
                    f"{worst.predicted_rel_rms:.3g}), cosine {worst.cosine:.5f}",
                    details={"tensors": [f.name for f in noise]},
                )
            )
        return out

    def to_json(self) -> dict[str, Any]:
        return {
            "subject": self.subject,
            "derived": self.derived,
            "reference": self.reference,
            "passed": not self.failed(),
            "counts": self.counts,
            "seconds": round(self.seconds, 3),
            "threads": dict(self.threads),
            "findings": [f.to_json() for f in self.findings],
            "tensors": [f.to_json() for f in self.figures],
            "meaning": self.meaning,
        }

    def receipt(self, hash_progress: Callable[[str], None] | None = None) -> dict[str, Any]:
        """The sha256 of every file on both sides and the per-tensor figures (reads every file once)."""

        def side(s: Side) -> dict[str, Any]:
            files = {}
            for name, chunks in s.files():
                if hash_progress:
                    hash_progress(name)
                h, n = hashlib.sha256(), 0
                for c in chunks():
                    h.update(c)
                    n += len(c)
                files[name] = {"sha256": h.hexdigest(), "bytes": n}
            return {"label": s.label, "files": files, **s.receipt_extra()}

        return {
            "derived": side(self.sides[0]),
            "reference": side(self.sides[1]),
            "counts": self.counts,
            "passed": not self.failed(),
            "tensors": [f.to_json() for f in self.figures],
        }


# Rows are read and dequantized (by compressed-tensors) about STEP_VALUES logical values at a time per side:
# compressed-tensors' unpacking costs about 3 ns a value while its temporaries stay in the cache (0.3-1.3 M
# values a call) and more than twice that at 5 M (measured, 2-core EPYC, W4A16). The figures are then
# accumulated SUB values at a time, each slice widened into a reused float32 buffer and passed over while it
# is in the core's L2 (three 256 KiB float32 slices: derived, reference, difference). Rows go in multiples of
# 32, so a step starts on a packed zero point's row (4- and 8-bit pack 8 or 4 rows into one int32).
STEP_VALUES = 1 << 19
SUB = 1 << 16
# the numpy path decodes 256 Ki values a step (1 MiB per float32 pass) and accumulates them SUB at a time:
# 64 Ki and 512 Ki steps measured slower (the Python between numpy calls, passes out of the cache)
NP_STEP_VALUES = SUB * 4


class _Buffers:
    """The float path's reused slices, and the thread choice applied to torch when it first loads.
    numpy: this pair's float work runs in numpy where both sides can (np_figures.py)."""

    def __init__(self, threads: ThreadChoice, numpy: bool = False) -> None:
        self.threads = threads
        self.numpy = numpy
        self._t: tuple[torch.Tensor, torch.Tensor, torch.Tensor] | None = None
        self._n: tuple[Any, Any, Any] | None = None
        self.raw = raw_buffers()

    def float_np(self) -> tuple[Any, Any, Any]:
        if self._n is None:
            import numpy as np  # heavy: numpy loads only when this runs

            from .memory import keep_freed_blocks  # lazy: diff.memory loads only on this path

            keep_freed_blocks()
            self._n = (np.empty(SUB, np.float32), np.empty(SUB, np.float32), np.empty(SUB, np.float32))
        return self._n

    def float(self) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        if self._t is None:
            try:
                import torch  # optional extra: torch, ImportError answered below
            except ImportError as e:  # a copy diffs without torch; anything with float work needs it
                raise MissingDependencyError(
                    f"diff needs torch for tensors that are not byte-identical ({e.name} is missing)",
                    hint='pip install "dflash2-ckpt[diff]"',
                ) from None

            from .memory import keep_freed_blocks  # lazy: diff.memory loads only on this path

            keep_freed_blocks()
            use_threads(self.threads)
            self._t = (torch.empty(SUB), torch.empty(SUB), torch.empty(SUB))
        return self._t


def _f32(x: torch.Tensor, buf: torch.Tensor) -> torch.Tensor:
    if x.dtype == buf.dtype:  # float32
        return x
    out = buf[: x.numel()]
    out.copy_(x)  # widened in place: the same values as .float(), no allocation
    return out


def _accumulate(
    fig: Figures,
    dv: torch.Tensor,
    rv: torch.Tensor,
    noise: float,
    narrow: tuple[str, str] | None,
    same: bool,
    bufs: _Buffers,
) -> None:
    """One step's rows, SUB values at a time. same: the stored bytes are identical (only the norms to add)."""
    d, r = dv.reshape(-1), rv.reshape(-1)
    bd, br, bdiff = bufs.float()
    for a in range(0, d.numel(), SUB):
        ds = _f32(d[a : a + SUB], bd)
        if same and fig.add_equal(ds):
            continue
        rs = _f32(r[a : a + SUB], br)
        if narrow is not None:
            noise += dtype_noise(ds, *narrow)
        fig.add(ds, rs, 0.0, bdiff)
    fig.noise2 += noise


def _accumulate_np(
    fig: Figures,
    dv: Any,
    rv: Any,
    dt: str | None,
    rt: str,
    noise: float,
    narrow: tuple[str, str] | None,
    bufs: _Buffers,
) -> None:
    """_accumulate in numpy. dt / rt: the stored dtype of dv / rv (dt None: dv is the float32 rows of a
    quantized tensor); the stored bytes of two dense sides are compared first (only the norms to add)."""
    from .np_figures import widen  # lazy: diff.np_figures loads only on this path

    d, r = dv.reshape(-1), rv.reshape(-1)
    same = dt == rt and d.size == r.size and d.tobytes() == r.tobytes() if dt is not None else False
    bd, br, bdiff = bufs.float_np()
    for a in range(0, d.size, SUB):
        ds = d[a : a + SUB] if dt is None or dt == "F32" else widen(d[a : a + SUB], dt, bd)
        if same and fig.add_equal_np(ds):
            continue
        rs = r[a : a + SUB] if rt == "F32" else widen(r[a : a + SUB], rt, br)
        if narrow is not None:
            noise += dtype_noise_np(ds, *narrow)
        fig.add_np(ds, rs, 0.0, bdiff)
    fig.noise2 += noise


def _compare_np(name: str, d: Any, r: Any, fig: Figures, bufs: _Buffers) -> None:
    """_compare's float path in numpy, for a tensor both sides read in numpy (numpy_rows)."""
    dm, rm = d.tensors()[name], r.tensors()[name]
    rows = dm.shape[0] if dm.shape else 1
    cols = max(1, math.prod(dm.shape[1:]) if dm.shape else 1)
    step = max(32, (NP_STEP_VALUES // cols) // 32 * 32)
    narrow = (dm.dtype, rm.dtype) if dm.scheme is None else None
    import numpy as np  # heavy: numpy loads only when this runs

    with np.errstate(all="ignore"):  # Inf / NaN are counted (Figures.add_np), not warned about
        for r0 in range(0, rows, step):
            _step_np(name, d, r, dm, rm, r0, min(rows, r0 + step), narrow, fig, bufs)


def _step_np(
    name: str,
    d: Any,
    r: Any,
    dm: TensorMeta,
    rm: TensorMeta,
    r0: int,
    r1: int,
    narrow: tuple[str, str] | None,
    fig: Figures,
    bufs: _Buffers,
) -> None:
    """Rows r0:r1 of one tensor: the derived rows (stored, or dequantized), then the figures."""
    if dm.scheme is None:
        dv, noise, dt = d.stored_rows_np(name, r0, r1), 0.0, dm.dtype
    else:
        (dv, noise), dt = d.rows_np(name, r0, r1), None
    _accumulate_np(fig, dv, r.stored_rows_np(name, r0, r1), dt, rm.dtype, noise, narrow, bufs)


def _numpy_pair(d: Side, r: Side) -> bool:
    """The derived side is compressed-tensors pack-quantized and the reference dense safetensors: the pair
    whose figures np_figures computes (every other pair keeps the torch path)."""
    if not (type(d) is SafetensorsSide and type(r) is SafetensorsSide):  # not a subclass (GGUFSide)
        return False
    schemes = [m.scheme for m in d.view.modules.values() if m.scheme is not None]
    return (
        bool(schemes)
        and all(s.family == "ct-pack" for s in schemes)
        and all(m.scheme is None for m in r.view.modules.values())
    )


def _same_bytes(a: torch.Tensor, b: torch.Tensor) -> bool:
    """Bit-identical storage (a NaN equals itself here), compared 8 bytes a lane where the size allows."""
    import torch  # heavy: torch loads only when this runs

    x, y = a.reshape(-1).view(torch.uint8), b.reshape(-1).view(torch.uint8)
    if x.numel() != y.numel():
        return False
    if x.numel() % 8 == 0:
        x, y = x.view(torch.int64), y.view(torch.int64)
    return bool(torch.equal(x, y))


def _side_rows(side: Side, meta: TensorMeta, name: str, r0: int, r1: int) -> tuple[torch.Tensor, float, bool]:
    """(rows, predicted noise, stored): a dense tensor's stored rows, not widened (the passes widen them slice
    by slice), else the float32 rows the side dequantizes."""
    if meta.scheme is None and hasattr(side, "stored_rows"):
        raw = side.stored_rows(name, r0, r1)
        if raw is not None:
            return raw, 0.0, True
    v, noise = side.rows(name, r0, r1)
    return v, noise, False


def _compare(name: str, d: Side, r: Side, fig: Figures, bufs: _Buffers) -> None:
    dm, rm = d.tensors()[name], r.tensors()[name]
    dense = dm.scheme is None and rm.scheme is None and hasattr(d, "dense_info") and hasattr(r, "dense_info")
    if dense and identical(d, r, name, name, bufs.raw):  # type: ignore[arg-type]
        fig.identical()
        return
    if bufs.numpy and rm.scheme is None and d.numpy_rows(name) and r.numpy_rows(name):  # type: ignore[attr-defined]
        _compare_np(name, d, r, fig, bufs)
        return
    bufs.float()  # torch loads here, with the thread choice, before any row is read
    rows = dm.shape[0] if dm.shape else 1
    cols = max(1, math.prod(dm.shape[1:]) if dm.shape else 1)
    step = max(32, (STEP_VALUES // cols) // 32 * 32)
    for r0 in range(0, rows, step):
        r1 = min(rows, r0 + step)
        dv, noise, d_raw = _side_rows(d, dm, name, r0, r1)
        rv, _, r_raw = _side_rows(r, rm, name, r0, r1)
        same = d_raw and r_raw and dm.dtype == rm.dtype and dv.shape == rv.shape and _same_bytes(dv, rv)
        narrow = (dm.dtype, rm.dtype) if dm.scheme is None and noise == 0.0 else None
        _accumulate(fig, dv, rv, noise, narrow, same, bufs)
        del dv, rv


def diff(
    derived: str | os.PathLike[str] | Source,
    reference: str | os.PathLike[str] | Source,
    *,
    progress: Progress | None = None,
    threads: int | None = None,
    float_path: Literal["auto", "torch"] = "auto",
) -> DiffResult:
    """Compare every tensor of `derived` with `reference`. Raises SourceError when either cannot be read.
    threads: torch's intra-op threads (default: chosen from OMP_NUM_THREADS, the cores and the load), set
    when torch loads. float_path: "auto" computes a pack-quantized pair's figures in numpy (np_figures.py),
    "torch" keeps every tensor on the torch path (the reference the numpy figures are tested against)."""
    start = time.monotonic()
    chosen = choose_threads(threads)
    d, r = open_side(derived), open_side(reference)
    dt, rt = d.tensors(), r.tensors()
    for tensors, what in ((rt, "reference"), (dt, "derived checkpoint")):
        if not tensors:  # nothing to compare against: never "passed" with every tensor "extra"
            for s in (d, r):
                if hasattr(s, "close"):
                    s.close()
            where = reference if what == "reference" else derived
            raise SourceError(
                f"the {what} holds no tensors (no weights file was found), so nothing can be compared",
                path=str(getattr(where, "label", where)),
                hint="point --reference at the checkpoint the derived one was made from, with its weights"
                if what == "reference"
                else "give the derived checkpoint's directory or file, with its weights",
            )
    names = sorted(set(dt) | set(rt))
    figures = []
    bufs = _Buffers(chosen, numpy=float_path == "auto" and _numpy_pair(d, r))
    try:
        for i, name in enumerate(names):
            if progress:
                progress(i, len(names), name)
            if name not in dt:
                figures.append(Figures(name, rt[name].shape, verdict="missing"))
                continue
            if name not in rt:
                figures.append(Figures(name, dt[name].shape, scheme=dt[name].scheme, verdict="extra"))
                continue
            fig = Figures(name, dt[name].shape, rt[name].shape, dt[name].scheme)
            if dt[name].shape != rt[name].shape:
                t = tuple(reversed(rt[name].shape)) == dt[name].shape and len(rt[name].shape) == 2
                fig.verdict, fig.reason = (
                    "different",
                    (
                        f"{'transposed: ' if t else ''}shape {list(dt[name].shape)} "
                        f"where the reference has {list(rt[name].shape)}"
                    ),
                )
            else:
                _compare(name, d, r, fig, bufs)
            fig.decide()
            figures.append(fig)
    finally:
        for side in (d, r):  # the files the comparison opened, also when it raises
            if hasattr(side, "close"):
                side.close()
    if progress:
        progress(len(names), len(names), "")
    counts: dict[str, int] = {}
    for f in figures:
        counts[f.verdict] = counts.get(f.verdict, 0) + 1
    meaning = config_meaning(derived, reference)
    return DiffResult(
        d.label, r.label, figures, time.monotonic() - start, (d, r), counts, chosen.to_json(), meaning
    )
