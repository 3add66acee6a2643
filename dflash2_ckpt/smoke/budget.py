"""Before a smoke runs: how much memory and time it will take, and a refusal above the budget.

The smoke computes in float32, so at real size the dominant terms are the drafter's parameters
(stored BF16 bytes x 2) and the borrowed embedding and head (vocab x hidden x 4 B each; a random pair
when no target is given). Activations are small (a few blocks of context for a couple of requests);
the sampled selector contexts are bounded by influence.CONTEXTS. Time is FLOPs over this machine's
measured matmul rate, times the number of forward passes the checks make, plus reading the weights.
Everything here is arithmetic on the DraftSpec: nothing is allocated, so a refusal costs nothing.
Torch-free except the rate probe, which the caller may skip (rate=...).
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from typing import Any

from ..errors import BudgetError
from ..formats.spec import DraftSpec

F32 = 4
CPU_FRACTION = 0.5  # of physical RAM: leaves room for the OS, the page cache and the caller
GPU_FRACTION = 0.9  # of the device's memory
READ_BYTES_PER_S = 1e9  # reading + widening the weights to float32, a conservative local figure
SELECTOR_CONTEXTS = 512  # smoke.influence.CONTEXTS (not imported: that module needs torch)
RUNTIME_BYTES = (
    512 << 20
)  # torch, triton (interpreted on a CPU), numpy, gguf and the package (measured: 250-450 MiB)
# Above what the process holds once torch and triton are imported: the allocator's arenas and the Triton
# interpreter's temporaries. With the resident size measured (runtime_bytes), the estimate follows the
# installation at hand instead of a figure from another machine.
WORKING_MARGIN = 256 << 20


def runtime_bytes() -> int:
    """What this process holds now (call it after importing torch and triton) plus the working margin;
    RUNTIME_BYTES where /proc cannot tell."""
    try:
        with open("/proc/self/statm") as f:
            resident_pages = int(f.read().split()[1])
    except (OSError, ValueError, IndexError):
        return RUNTIME_BYTES
    return resident_pages * os.sysconf("SC_PAGE_SIZE") + WORKING_MARGIN


# The Triton conv under TRITON_INTERPRET=1 (CPU) costs per program loop trip, not per FLOP: trips =
# calls x blocks x (hidden / 128)^2 with the interpreter's 128-wide tiles. Fitted on the 2-core development
# VM (H 512 / 1024, 2 / 4 layers: 1.4-3.9 s), about 3.3 ms a trip plus 0.55 s. On a CPU the smoke runs it
# on a sample only (runner._ConvSample: layer 0's 4 calls, one block), the torch conv on every layer.
INTERPRET_TRIP_S, INTERPRET_FIXED_S = 3.3e-3, 0.55


@dataclass(frozen=True)
class Estimate:
    peak_bytes: int
    seconds: float
    parts: dict[str, int]  # bytes by what holds them
    forwards: int
    flops: float
    triton_conv: str = "every layer"  # or the sample the interpreter runs on a CPU

    def to_json(self) -> dict[str, Any]:
        return {
            "peak_bytes": self.peak_bytes,
            "seconds": round(self.seconds, 1),
            "parts": dict(self.parts),
            "forward_passes": self.forwards,
            "flops": self.flops,
            "triton_conv": self.triton_conv,
        }


def gib(n: float) -> str:
    for unit, size in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n >= size:
            return f"{n / size:.1f} {unit}"
    return f"{int(n)} B"


def trunk_params(spec: DraftSpec) -> int:
    h, i, hd, L = spec.hidden_size, spec.intermediate_size, spec.head_dim, spec.num_hidden_layers
    q, kv = spec.num_attention_heads * hd, spec.num_key_value_heads * hd
    per_layer = h * (q + 2 * kv) + q * h + 3 * h * i + 2 * h + 2 * hd
    if spec.version == "v2":
        t, g = spec.conv_kernel_size or 0, spec.conv_groups or 0
        per_layer += 2 * (2 * t * h + 2 * t * g * h)
    return h * spec.fc_in_features + 2 * h + L * per_layer


def selector_params(spec: DraftSpec) -> int:
    if spec.version != "v2":
        return 0
    r = spec.selector_rank or 0
    return 2 * spec.vocab_size * r + r * spec.hidden_size


def estimate(
    spec: DraftSpec,
    *,
    requests: int,
    block: int,
    context_blocks: int = 3,
    tied_head: bool = False,
    rate: float = 50e9,
    interpret: bool = False,
    runtime: int = RUNTIME_BYTES,
) -> Estimate:
    """rate: sustained float32 matmul FLOP/s of the device (measure with matmul_rate()); interpret: the
    Triton kernels run in the interpreter (no GPU); runtime: the process's own footprint (runtime_bytes())."""
    h, v = spec.hidden_size, spec.vocab_size
    n = block - 1
    tokens = requests * (context_blocks + 1) * block
    parts = {
        "drafter parameters (float32)": (trunk_params(spec) + selector_params(spec)) * F32,
        "embedding and head (float32)": (1 if tied_head else 2) * v * h * F32,
        "activations": tokens * max(spec.intermediate_size, spec.fc_in_features) * F32 * 6
        + requests * n * v * F32 * 2,
    }
    if spec.version == "v2":
        k, r = spec.selector_top_k or 1, spec.selector_rank or 0
        parts["sampled selector contexts"] = SELECTOR_CONTEXTS * n * (k * r * 3 + k * k) * F32
    # the largest stored tensor is briefly held in its stored dtype (BF16, 2 B) beside its float32 copy
    parts["widening the largest tensor"] = max(v * h, spec.intermediate_size * h, h * spec.fc_in_features) * 2
    parts["runtime (torch, triton)"] = runtime
    # the forward, candidates, rerun; for v2 the ablation's 2 per layer + 3, and on a GPU the Triton forward
    forwards = 3 + (2 * spec.num_hidden_layers + 3 + (0 if interpret else 1) if spec.version == "v2" else 0)
    flops = forwards * (2.0 * trunk_params(spec) * tokens + 2.0 * requests * n * v * h)
    stored = (trunk_params(spec) + selector_params(spec)) * 2  # BF16 on disk, typically
    seconds = (
        flops / rate + stored / READ_BYTES_PER_S + parts["embedding and head (float32)"] / READ_BYTES_PER_S
    )
    what = "every layer (compiled)"
    if interpret and spec.version == "v2":
        trips = 4 * max(spec.hidden_size / 128, 1) ** 2  # layer 0's four calls, one block
        seconds += INTERPRET_FIXED_S + INTERPRET_TRIP_S * trips
        what = (
            "torch in every layer; Triton (interpreted) on a sample: layer 0, both convs and sides, one block"
        )
    return Estimate(sum(parts.values()), seconds, parts, forwards, flops, what)


def machine_budget(device_type: str) -> int:
    """The default --max-memory: a safe fraction of the memory of the device the smoke runs on."""
    if device_type == "cuda":
        import torch  # heavy: torch loads only when this runs

        return int(torch.cuda.mem_get_info()[1] * GPU_FRACTION)
    try:
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):  # not POSIX: no default cap we can justify
        return 1 << 62
    return int(total * CPU_FRACTION)


def matmul_rate(device: Any) -> float:
    """Sustained float32 matmul FLOP/s of `device`, from a ~10 ms probe."""
    import torch  # heavy: torch loads only when this runs

    a = torch.randn(512, 512, device=device)
    torch.mm(a, a)
    t0, reps = time.perf_counter(), 4
    for _ in range(reps):
        torch.mm(a, a)
    if getattr(device, "type", device) == "cuda":
        torch.cuda.synchronize(device)
    return max(reps * 2 * 512**3 / max(time.perf_counter() - t0, 1e-9), 1e8)


def check_budget(est: Estimate, budget: int, *, device_type: str, layers: int, requests: int) -> None:
    if est.peak_bytes <= budget:
        return
    ways = []
    if device_type != "cuda":
        ways.append("run on a GPU (--device cuda)")
    ways.append(f"smoke fewer draft layers (--layers 1 of {layers})" if layers > 1 else "")
    if requests > 1:
        ways.append("use one request (--requests 1)")
    ways.append(f"or raise --max-memory above {gib(est.peak_bytes)} if the machine has it")
    biggest = max(est.parts.items(), key=lambda kv: kv[1])
    raise BudgetError(
        f"the smoke would need about {gib(est.peak_bytes)} ({biggest[0]}: {gib(biggest[1])}) and about "
        f"{est.seconds:.0f} s, over the {gib(budget)} budget; nothing was loaded",
        hint="; ".join(w for w in ways if w),
    )
