"""SmokeReport: what the smoke forward found, drafted and measured. Torch-free, so it renders anywhere
(report/text_smoke.py lays it out as text)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

from ..findings import Finding, Verdict


@dataclass
class SmokeReport(Verdict):
    checkpoint: str
    version: str
    device: str  # "cuda:0", "cpu"
    triton_mode: str  # "compiled" or "interpret" (TRITON_INTERPRET=1)
    embedding_source: dict[str, str]  # {"embed_tokens": checkpoint|target|random, "lm_head": ...}
    inputs: dict[str, Any] = field(default_factory=dict)
    paths: list[dict[str, Any]] = field(default_factory=list)  # one per smoke input
    ablation: dict[str, Any] = field(default_factory=dict)  # what each v2 module changes when removed
    timings: dict[str, float] = field(default_factory=dict)  # seconds per stage
    findings: list[Finding] = field(default_factory=list)
    stages_run: list[str] = field(default_factory=list)
    estimate: dict[str, Any] = field(default_factory=dict)  # memory / time estimated before the run
    threads: dict[str, Any] = field(default_factory=dict)  # the torch thread choice (dflash2_ckpt.threads)
    kind: ClassVar[str] = "smoke"

    @property
    def subject(self) -> str:
        return self.checkpoint

    def to_json(self) -> dict[str, Any]:
        return {
            "checkpoint": self.checkpoint,
            "version": self.version,
            "device": self.device,
            "triton_mode": self.triton_mode,
            "embedding_source": dict(self.embedding_source),
            "inputs": dict(self.inputs),
            "paths": list(self.paths),
            "ablation": dict(self.ablation),
            "timings_s": {k: round(v, 6) for k, v in self.timings.items()},
            "stages_run": list(self.stages_run),
            "estimate": dict(self.estimate),
            "threads": dict(self.threads),
            "passed": self.passed,
            "findings": [f.to_json() for f in self.findings],
        }
