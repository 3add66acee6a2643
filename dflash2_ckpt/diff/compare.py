"""Per-tensor figures accumulated over row chunks, and the verdict.

Cosine similarity, max abs error and relative RMS error (||d - r|| / ||r||) need only running sums,
so a tensor is compared chunk by chunk. The verdict:
- equal: every value identical after dequantization (max abs error 0);
- quantization-noise: relative RMS error within NOISE_FACTOR x what the scheme predicts (dequant.py:
  sum of D^2/12 over the elements, the variance of round-to-nearest on a grid of step D). A factor
  of 3 leaves room for error-feedback quantizers (GPTQ) and scales stored in low precision, while a
  random, zeroed or swapped tensor sits at relative RMS ~1-1.4, far above any 4-bit-or-wider bound
  (W4 group 128 predicts ~0.1);
- different: anything else, including a shape that differs (a transposed tensor).
A dense derived tensor in a narrower float dtype than its reference is rounding too: its grid is the
dtype's own (bf16: 7 mantissa bits, f16: 10).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    import numpy as np
    import torch  # the float figures need torch, or numpy for pack-quantized pairs (np_figures.py)
    from numpy.typing import NDArray

Verdict = Literal["equal", "quantization-noise", "different", "missing", "extra"]
NOISE_FACTOR = 3.0
MANTISSA = {"BF16": 7, "F16": 10, "F8_E4M3": 3, "F8_E5M2": 2}


@dataclass
class Figures:
    name: str
    shape: tuple[int, ...] = ()
    ref_shape: tuple[int, ...] = ()
    scheme: str | None = None
    dot: float = 0.0
    dd: float = 0.0
    rr: float = 0.0
    err2: float = 0.0
    max_abs: float = 0.0
    noise2: float = 0.0  # predicted squared rounding error
    nonfinite: int = 0
    verdict: Verdict = "equal"
    reason: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

    def add(
        self, d: torch.Tensor, r: torch.Tensor, noise2: float, scratch: torch.Tensor | None = None
    ) -> None:
        # float32 dot products per chunk (BLAS), float64 running totals across chunks; scratch: a float32
        # buffer of at least d's size for the difference (no allocation per chunk)
        import torch

        d, r = d.float().reshape(-1), r.float().reshape(-1)
        diff = (
            torch.sub(d, r, out=scratch[: d.numel()])
            if scratch is not None and scratch.numel() >= d.numel()
            else d - r
        )
        sums = torch.stack(
            [torch.dot(d, r), torch.dot(d, d), torch.dot(r, r), torch.dot(diff, diff)]
        ).tolist()
        if not all(math.isfinite(x) for x in sums):  # NaN / Inf propagate into the sums: find and drop them
            bad = ~(torch.isfinite(d) & torch.isfinite(r))
            if bool(bad.any()):
                self.nonfinite += int(bad.sum())
                self.add(torch.where(bad, 0.0, d), torch.where(bad, 0.0, r), noise2)
                return
            # finite values whose products overflow float32 (garbage weights): this chunk in float64
            d64, r64 = d.double(), r.double()
            diff = (d64 - r64).float()
            sums = torch.stack(
                [
                    torch.dot(d64, r64),
                    torch.dot(d64, d64),
                    torch.dot(r64, r64),
                    torch.dot(d64 - r64, d64 - r64),
                ]
            ).tolist()
        self.dot, self.dd, self.rr, self.err2 = (
            a + b for a, b in zip((self.dot, self.dd, self.rr, self.err2), sums)
        )
        if diff.numel():  # one pass: |x| is largest at the minimum or the maximum
            lo, hi = torch.aminmax(diff)
            self.max_abs = max(self.max_abs, abs(float(lo)), abs(float(hi)))
        self.noise2 += noise2

    def add_np(
        self,
        d: NDArray[np.float32],
        r: NDArray[np.float32],
        noise2: float,
        scratch: NDArray[np.float32] | None = None,
    ) -> None:
        """add() over numpy float32 vectors (np_figures.py): the same sums, numpy's BLAS dots. Inf / NaN are
        counted as add() counts them; the caller silences numpy's warnings about them (np.errstate)."""
        import numpy as np  # heavy: numpy loads only when this runs

        diff = (
            np.subtract(d, r, out=scratch[: d.size])
            if scratch is not None and scratch.size >= d.size
            else d - r
        )
        sums = [float(np.dot(d, r)), float(np.dot(d, d)), float(np.dot(r, r)), float(np.dot(diff, diff))]
        if not math.isfinite(sums[0] + sums[1] + sums[2] + sums[3]):  # one check: Inf / NaN propagate
            bad = ~(np.isfinite(d) & np.isfinite(r))
            if bool(bad.any()):
                self.nonfinite += int(bad.sum())
                self.add_np(np.where(bad, np.float32(0), d), np.where(bad, np.float32(0), r), noise2)
                return
            d64, r64 = d.astype(np.float64), r.astype(np.float64)
            e64 = d64 - r64
            diff = e64.astype(np.float32)
            sums = [
                float(np.dot(d64, r64)),
                float(np.dot(d64, d64)),
                float(np.dot(r64, r64)),
                float(np.dot(e64, e64)),
            ]
        self.dot += sums[0]
        self.dd += sums[1]
        self.rr += sums[2]
        self.err2 += sums[3]
        if diff.size:
            self.max_abs = max(self.max_abs, -float(diff.min()), float(diff.max()))
        self.noise2 += noise2

    def add_equal_np(self, x: NDArray[np.float32]) -> bool:
        """add_equal() over a numpy float32 vector."""
        import numpy as np  # heavy: numpy loads only when this runs

        xx = float(np.dot(x, x))
        if not math.isfinite(xx):
            return False
        self.dot, self.dd, self.rr = self.dot + xx, self.dd + xx, self.rr + xx
        return True

    def identical(self) -> None:
        """Every stored byte of the tensor is the same on both sides and no value is NaN / Inf (identical.py):
        the figures of `equal` without the float work. The float path gives exactly these: its three sums are
        one number s, s / sqrt(s * s) is 1 in IEEE arithmetic and the errors are 0; the sums stay 0 here."""
        self.verdict, self.max_abs, self.err2, self.noise2 = "equal", 0.0, 0.0, 0.0

    def add_equal(self, x: torch.Tensor) -> bool:
        """A chunk whose derived and reference values are the same (bit-identical stored bytes): one dot
        gives the three products, the error is zero. False when that dot is not finite (the caller then
        compares the chunk in full, which counts the NaN / Inf values)."""
        import torch  # heavy: torch loads only when this runs

        x = x.float().reshape(-1)
        xx = float(torch.dot(x, x))
        if not math.isfinite(xx):
            return False
        self.dot, self.dd, self.rr = self.dot + xx, self.dd + xx, self.rr + xx
        return True

    @property
    def cosine(self) -> float | None:
        den = math.sqrt(self.dd * self.rr)
        return self.dot / den if den else (1.0 if self.dd == self.rr == 0 else 0.0)

    @property
    def rel_rms(self) -> float | None:
        return math.sqrt(self.err2 / self.rr) if self.rr else (0.0 if self.err2 == 0 else math.inf)

    @property
    def predicted_rel_rms(self) -> float:
        return math.sqrt(self.noise2 / self.rr) if self.rr else 0.0

    def decide(self) -> None:
        if self.verdict in ("missing", "extra", "different"):
            return
        rel = self.rel_rms or 0.0
        if self.nonfinite:
            self.verdict, self.reason = "different", f"{self.nonfinite} NaN / Inf value(s)"
        elif self.max_abs == 0:
            self.verdict = "equal"
        elif rel <= NOISE_FACTOR * self.predicted_rel_rms:
            self.verdict = "quantization-noise"
        else:
            self.verdict = "different"
            what = (
                "zeroed"
                if self.dd == 0
                else ("random or swapped" if abs(self.cosine or 0) < 0.5 else "beyond its scheme's rounding")
            )
            self.reason = (
                f"{what}: relative RMS error {rel:.3g} where {self.scheme or 'its dtype'} predicts "
                f"{self.predicted_rel_rms:.3g}"
            )

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, "verdict": self.verdict, "shape": list(self.shape)}
        if self.verdict not in ("missing", "extra"):
            out.update(
                scheme=self.scheme,
                cosine=self.cosine,
                max_abs_error=self.max_abs,
                relative_rms_error=self.rel_rms,
                predicted_relative_rms_error=self.predicted_rel_rms,
            )
        if self.reason:
            out["reason"] = self.reason
        if self.ref_shape and self.ref_shape != self.shape:
            out["reference_shape"] = list(self.ref_shape)
        return out


def dtype_noise(d: torch.Tensor, stored_dtype: str, ref_dtype: str) -> float:
    """Predicted squared rounding error of a dense tensor stored narrower than its reference."""
    m, mr = MANTISSA.get(stored_dtype), MANTISSA.get(ref_dtype, 52 if ref_dtype == "F64" else 23)
    if m is None or m >= mr:
        return 0.0
    import torch  # heavy: torch loads only when this runs

    v = d.abs().float().clamp_min_(torch.finfo(torch.float32).tiny)  # one new tensor, then in place
    torch.log2(v, out=v)
    v.floor_().sub_(m).exp2_()
    return float(v.mul_(v).div_(12).sum(dtype=torch.float64))


def dtype_noise_np(d: NDArray[np.float32], stored_dtype: str, ref_dtype: str) -> float:
    """dtype_noise() over a numpy float32 vector; the step 2^(floor(log2|x|) - m) read off frexp's exponent."""
    m, mr = MANTISSA.get(stored_dtype), MANTISSA.get(ref_dtype, 52 if ref_dtype == "F64" else 23)
    if m is None or m >= mr:
        return 0.0
    import numpy as np  # heavy: numpy loads only when this runs

    with np.errstate(all="ignore"):
        v = np.maximum(np.abs(d), np.finfo(np.float32).tiny)
        _, e = np.frexp(v)  # v = f * 2^e, f in [0.5, 1): floor(log2 v) = e - 1
        step = np.ldexp(np.float32(1), e - 1 - m)
        return float(np.sum(step * step / 12, dtype=np.float64))
