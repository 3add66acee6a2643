"""The explicit content scan (`verify --scan`): NaN / Inf inside floating-point weights, as DF611.

Header-level verification never reads tensor data; this is the one place in the verify path that
does, and only when asked. Each tensor is streamed through the Source in bounded chunks (so a
3.8 GB checkpoint, local or over HTTP Range, costs a few MiB of memory) and classified on its bit
pattern: a value is non-finite when its exponent bits are all ones; NaN when its mantissa is then
non-zero. Working on the integer view instead of converting to float keeps BF16 and the F8 formats
(which numpy has no float type for) on the same code path, and never raises floating-point warnings.

numpy is imported lazily: the header-level path (pre-commit hooks) must stay light.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..errors import MissingDependencyError, SourceError
from ..findings import Finding

if TYPE_CHECKING:
    from ..checkpoint import Checkpoint
    from ..sources.safetensors_header import TensorInfo
    from .context import CheckContext

EMITS: frozenset[str] = frozenset({"DF611"})


def check(ctx: CheckContext) -> list[Finding]:
    """Only when asked (--scan): the one family that reads tensor data. Its summary goes in the report."""
    if not ctx.options.scan:
        return []
    found, ctx.extra["scan"] = scan_checkpoint(ctx.checkpoint, progress=ctx.options.progress)
    return found


# Bytes read per step: large enough that per-call overhead (an HTTP Range request on the Hub) is
# small, small enough that the temporaries below stay a few times this size.
CHUNK_BYTES = 4 * 1024 * 1024


@dataclass(frozen=True)
class _Layout:
    """Bit layout of one float format: element size, exponent mask, mantissa mask, and whether
    the all-ones exponent with a zero mantissa means Inf (False for the E4M3 / E8M0 formats,
    where only NaN exists)."""

    size: int
    exp: int
    man: int
    has_inf: bool = True


LAYOUTS: dict[str, _Layout] = {
    "F64": _Layout(8, 0x7FF0_0000_0000_0000, 0x000F_FFFF_FFFF_FFFF),
    "F32": _Layout(4, 0x7F80_0000, 0x007F_FFFF),
    "F16": _Layout(2, 0x7C00, 0x03FF),
    "BF16": _Layout(2, 0x7F80, 0x007F),
    "F8_E5M2": _Layout(1, 0x7C, 0x03),
    # E4M3 (fn variant, as in torch.float8_e4m3fn): no Inf; NaN is S.1111.111 only
    "F8_E4M3": _Layout(1, 0x7F, 0x00, has_inf=False),
    # E8M0 (scale format): 0xFF is NaN; there is no sign or mantissa
    "F8_E8M0": _Layout(1, 0xFF, 0x00, has_inf=False),
}


@dataclass
class TensorScan:
    name: str
    nan: int = 0
    inf: int = 0
    first_index: int | None = None  # flat element index of the first non-finite value

    @property
    def count(self) -> int:
        return self.nan + self.inf


def _numpy() -> Any:
    try:
        import numpy  # optional extra: numpy, ImportError answered below
    except ImportError:
        raise MissingDependencyError(
            "the content scan (--scan) needs numpy", hint="pip install numpy"
        ) from None
    return numpy


def _chunks(ckpt: Checkpoint, t: TensorInfo, step: int) -> Iterator[bytes]:
    pos = t.begin
    while pos < t.end:
        n = min(step, t.end - pos)
        data = ckpt.read_counted(t.file, pos, n)
        if len(data) != n:
            # the header was validated against the file size, so this means the file shrank
            raise SourceError(
                f"{t.file} ended early while scanning {t.name} (byte {pos + len(data)})",
                path=ckpt.label,
                hint="the file changed during the scan; run it again",
            )
        yield data
        pos += n


def scan_tensor(ckpt: Checkpoint, t: TensorInfo, chunk_bytes: int = CHUNK_BYTES) -> TensorScan:
    """Count NaN and Inf in one tensor, reading at most `chunk_bytes` (rounded to whole elements) at a time."""
    np = _numpy()
    lay = LAYOUTS[t.dtype]
    udt = np.dtype(f"<u{lay.size}")
    step = max(lay.size, chunk_bytes - chunk_bytes % lay.size)
    out = TensorScan(t.name)
    seen = 0
    for data in _chunks(ckpt, t, step):
        bits = np.frombuffer(data, dtype=udt)
        bad = (bits & udt.type(lay.exp)) == udt.type(lay.exp)
        if lay.man and lay.has_inf:
            nan = bad & ((bits & udt.type(lay.man)) != 0)
        else:
            nan = bad
        n_bad = int(np.count_nonzero(bad))
        if n_bad:
            n_nan = int(np.count_nonzero(nan))
            out.nan += n_nan
            out.inf += n_bad - n_nan
            if out.first_index is None:
                out.first_index = seen + int(np.argmax(bad))
        seen += bits.size
    return out


def scan_checkpoint(
    ckpt: Checkpoint, chunk_bytes: int = CHUNK_BYTES, progress: Callable[[int, int, str], None] | None = None
) -> tuple[list[Finding], dict[str, Any]]:
    """DF611 for every floating-point tensor holding NaN or Inf, plus a summary of what was read.

    Integer tensors cannot hold NaN and are skipped; tensors in shards that could not be read are
    already reported (DF60x) and are not in `ckpt.tensors`. `progress(done, total, tensor)` after each
    floating-point tensor read.
    """
    _numpy()  # fail before reading anything when the dependency is missing
    findings: list[Finding] = []
    scanned = skipped = 0
    before = ckpt.bytes_read
    total = sum(t.dtype in LAYOUTS for t in ckpt.tensors.values())
    for t in sorted(ckpt.tensors.values(), key=lambda t: (t.file, t.begin)):
        if t.dtype not in LAYOUTS:
            skipped += 1
            continue
        scanned += 1
        r = scan_tensor(ckpt, t, chunk_bytes)
        if progress is not None:
            progress(scanned, total, t.name)
        if not r.count:
            continue
        kinds = ", ".join(f"{n} {k}" for n, k in ((r.nan, "NaN"), (r.inf, "Inf")) if n)
        findings.append(
            Finding(
                "DF611",
                f"{t.name} ({t.dtype}{list(t.shape)}) holds {r.count} non-finite values ({kinds}); the "
                f"first at flat index {r.first_index}. Every engine propagates them into the draft logits: "
                "re-export the weights from a healthy training step",
                tensor=t.name,
                file=t.file,
                details={
                    "count": r.count,
                    "nan": r.nan,
                    "inf": r.inf,
                    "first_index": r.first_index,
                    "numel": t.numel,
                },
            )
        )
    summary = {
        "tensors_scanned": scanned,
        "tensors_skipped": skipped,
        "bytes_scanned": ckpt.bytes_read - before,
        "chunk_bytes": chunk_bytes,
    }
    return findings, summary
