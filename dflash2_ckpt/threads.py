"""How many intra-op threads torch gets for diff, accept and smoke, chosen on purpose.

torch's default is one thread per core it sees, and its OpenMP workers spin while they wait for each
other. On a machine whose cores are already busy (CI runners, shared boxes) that makes the same diff or
accept several times slower and burns CPU the other jobs wanted (bench/RESULTS.md, threads). So:
1. `--threads N` (the `threads=` argument) when given;
2. else `OMP_NUM_THREADS` when set to a positive integer (the user's, or their scheduler's, choice);
3. else the cores this process may run on (os.sched_getaffinity: a cgroup or taskset limit counts),
   less the current load: one thread when the 1-minute load average is at or above them.
Choosing is torch-free; `apply` / `use` import torch and set it. Every report that ran torch says what was chosen.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .errors import ConfigError


@dataclass(frozen=True)
class ThreadChoice:
    threads: int
    source: str  # "--threads", "OMP_NUM_THREADS" or "load"
    usable_cores: int
    load_average: float | None  # 1-minute, None where the platform has none

    @property
    def reason(self) -> str:
        if self.source != "load":
            return f"{self.source}={self.threads}"
        load = "unknown" if self.load_average is None else f"{self.load_average:.2f}"
        busy = " (contended)" if self.threads == 1 and self.usable_cores > 1 else ""
        return f"{self.usable_cores} usable core(s), load average {load}{busy}"

    def to_json(self) -> dict[str, Any]:
        return {
            "threads": self.threads,
            "source": self.source,
            "usable_cores": self.usable_cores,
            "load_average": None if self.load_average is None else round(self.load_average, 2),
            "reason": self.reason,
        }


def usable_cores() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # macOS / Windows: no affinity call
        return max(1, os.cpu_count() or 1)


def _load() -> float | None:
    try:
        return os.getloadavg()[0]
    except (AttributeError, OSError):
        return None


def from_load(cores: int, load: float | None) -> int:
    """Threads for `cores` usable cores under a 1-minute load average `load` (the other runnable work)."""
    if load is None:
        return cores
    if load >= cores:
        return 1
    return max(1, min(cores, int(cores - load + 0.5)))  # the cores the load leaves free, rounded


def choose(requested: int | None = None, env: Mapping[str, str] | None = None) -> ThreadChoice:
    """The thread count by the rules above. Raises ConfigError for a requested count below 1."""
    env = os.environ if env is None else env
    cores, load = usable_cores(), _load()
    if requested is not None:
        if requested < 1:
            raise ConfigError(f"--threads {requested}: give 1 or more", field="threads")
        return ThreadChoice(requested, "--threads", cores, load)
    omp = env.get("OMP_NUM_THREADS", "").strip()
    if omp.isdigit() and int(omp) >= 1:
        return ThreadChoice(int(omp), "OMP_NUM_THREADS", cores, load)
    return ThreadChoice(from_load(cores, load), "load", cores, load)


def use(choice: ThreadChoice) -> None:
    """Set torch's intra-op threads to a choice made earlier (diff sets them when torch first loads)."""
    import torch  # heavy: torch loads only when this runs

    if torch.get_num_threads() != choice.threads:
        torch.set_num_threads(choice.threads)


def apply(requested: int | None = None) -> ThreadChoice:
    """Choose and set torch's intra-op threads; returns the choice for the report."""
    choice = choose(requested)
    use(choice)
    return choice
