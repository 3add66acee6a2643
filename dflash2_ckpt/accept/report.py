"""AcceptReport: what the accept run measured. Torch-free, so it renders anywhere (report/text_accept.py
lays it out as text; json, sarif and github need nothing more)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

from ..findings import Finding, Verdict
from .checks import NOT_DRAFTING, OPENING_TOKENS
from .stats import Interval


@dataclass
class PromptResult:
    label: str
    prompt_tokens: int
    generated: int
    steps: int
    tau: Interval
    accepted: list[int]  # accepted drafts per verification step
    lossless: bool
    tokens_per_s: float
    baseline_tokens_per_s: float

    def to_json(self) -> dict[str, Any]:
        return {
            "prompt": self.label,
            "prompt_tokens": self.prompt_tokens,
            "generated": self.generated,
            "steps": self.steps,
            "tau": self.tau.to_json(),
            "accepted_per_step": list(self.accepted),
            "lossless": self.lossless,
            "tokens_per_s": round(self.tokens_per_s, 2),
            "baseline_tokens_per_s": round(self.baseline_tokens_per_s, 2),
        }


@dataclass
class AcceptReport(Verdict):
    drafter: str
    target: str
    device: str
    kernels: str
    block_size: int
    max_new_tokens: int
    prompts_source: str
    tau: Interval
    acceptance_rate: float  # vLLM's: accepted drafts / drafted tokens
    per_position: list[float]  # steps that accepted draft j / steps, j = 1 … B − 1
    tokens_per_s: float
    baseline_tokens_per_s: float
    target_forwards: dict[str, int]  # {"baseline", "speculative", "saved"}
    prompts: list[PromptResult] = field(default_factory=list)
    expect: tuple[float, float] | None = None
    findings: list[Finding] = field(default_factory=list)
    engine: str = "reference"  # "reference" (this toolkit's loop) or the serving engine's name
    build: str | None = None  # the engine's own build string
    engine_details: dict[str, Any] = field(default_factory=dict)  # counters, parity, the engine's paths
    batch: int = 1  # prompts decoded together (one target forward per step for all)
    threads: dict[str, Any] = field(default_factory=dict)  # the torch thread choice (dflash2_ckpt.threads)
    # τ over the first checks.OPENING_TOKENS new tokens of every output: what DF751 judges
    tau_opening: Interval | None = None
    kind: ClassVar[str] = "accept"

    @property
    def subject(self) -> str:
        return self.drafter

    @property
    def tau_opening_tokens(self) -> int:
        return min(OPENING_TOKENS, self.max_new_tokens)

    @property
    def speedup(self) -> float:
        return self.tokens_per_s / self.baseline_tokens_per_s if self.baseline_tokens_per_s else 0.0

    def to_json(self, *, timings: bool = True) -> dict[str, Any]:
        """timings=False leaves out the wall-clock figures, so two runs give the same document."""
        doc: dict[str, Any] = {
            "drafter": self.drafter,
            "target": self.target,
            "device": self.device,
            "kernels": self.kernels,
            "block_size": self.block_size,
            "max_new_tokens": self.max_new_tokens,
            "prompts_source": self.prompts_source,
            "tau": self.tau.to_json(),
            "acceptance_rate": round(self.acceptance_rate, 4),
            "acceptance_per_position": [round(r, 4) for r in self.per_position],
            "target_forwards": dict(self.target_forwards),
            "expect": None if self.expect is None else {"tau": self.expect[0], "tolerance": self.expect[1]},
            "prompts": [p.to_json() for p in self.prompts],
            "passed": self.passed,
            "findings": [f.to_json() for f in self.findings],
            "engine": self.engine,
            "build": self.build,
        }
        if self.tau_opening is not None:
            doc["tau_opening"] = {
                **self.tau_opening.to_json(),
                "new_tokens": self.tau_opening_tokens,
                "threshold": NOT_DRAFTING,
            }
        if self.batch != 1:
            doc["batch"] = self.batch
        if self.engine_details:
            doc["engine_details"] = {k: v for k, v in self.engine_details.items() if timings or k != "wall_s"}
        if timings:
            doc["tokens_per_s"] = {
                "speculative": round(self.tokens_per_s, 2),
                "baseline": round(self.baseline_tokens_per_s, 2),
                "speedup": round(self.speedup, 3),
            }
            if self.threads:  # chosen from the load: a timing condition, not a result
                doc["threads"] = dict(self.threads)
        else:
            for p in doc["prompts"]:
                del p["tokens_per_s"], p["baseline_tokens_per_s"]
        return doc
