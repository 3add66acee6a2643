"""The public drafting API: load a drafter once, draft blocks from your own hidden states, see every stage.

`draft(checkpoint, hidden_states, anchors)` runs one forward and returns each intermediate result
(context, per-slot hidden, unary candidate logits, candidates, edge scores, greedy and sampled
paths) so a user can compare the forward with their own implementation, stage by stage.
`load_drafter` keeps the loaded drafter for repeated drafting (the `accept` loop uses it).
The math is the smoke's reference drafter (drafter.py, walk.py) and its Triton kernels; nothing
here re-implements it.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import torch

from ..errors import ConfigError
from ..findings import Finding
from ..formats.spec import DraftSpec
from .device import pick_device, prepare_triton
from .drafter import ConvFn, KeptContext, RefDrafter
from .embedding import borrow
from .opening import open_for_smoke, tensor_files
from .runner import BoundDraft, assumptions, triton_conv_fn
from .walk import walk
from .weights import load_weights

Kernels = Literal["torch", "triton"]


@dataclass
class DraftResult:
    """One drafted block per request. Q requests, n context tokens, N = B − 1 slots, K candidates."""

    context: torch.Tensor  # [Q, n, H]  hidden_norm(fc(taps))
    hidden: torch.Tensor  # [Q, N, H]  g = norm(r) at block rows 1 … B − 1
    unary: torch.Tensor  # [Q, N, K]  candidate logits u (multiplier, then softcap)
    candidates: torch.Tensor  # [Q, N, K]  top-K token ids of the target head
    greedy: torch.Tensor  # [Q, N]     drafted tokens, greedy walk (v1: per-slot argmax)
    selector_projection: torch.Tensor | None = None  # [Q, N, R]  z (v2 only)
    edge_scores: torch.Tensor | None = None  # [Q, N, K, K] S (v2 only)
    sampled: torch.Tensor | None = None  # [Q, N]     sampled walk (temperature > 0, v2 only)
    q: torch.Tensor | None = None  # [Q, N, K]  proposal distribution of the sampled walk
    layers: dict[str, torch.Tensor] = field(default_factory=dict)  # residual stream after each layer


@dataclass
class Drafter:
    """A drafter loaded with its borrowed embedding and head, ready to draft many blocks."""

    spec: DraftSpec
    params: dict[str, torch.Tensor]
    embed: torch.Tensor
    head: torch.Tensor
    block_size: int
    mask_token_id: int
    device: torch.device
    kernels: Kernels
    findings: list[Finding] = field(default_factory=list)
    embedding_source: dict[str, str] = field(default_factory=dict)
    causal_override: tuple[bool, ...] | None = None  # forced per-layer causality (failure studies)
    label: str = ""

    def replace(self, **changes: Any) -> Drafter:
        """A copy with fields changed (params are shared unless replaced); used to study failures."""
        return dataclasses.replace(self, **changes)

    def _ref(self) -> RefDrafter:
        ref = RefDrafter(self.spec, self.params, self.embed)
        if self.causal_override is not None:
            ref.causal = tuple(self.causal_override)
        return ref

    def _bound(
        self, hidden: torch.Tensor, anchors: torch.Tensor, kept: KeptContext | None = None
    ) -> BoundDraft:
        ref = kept.drafter if kept is not None else self._ref()
        d = BoundDraft(
            self.spec,
            ref,
            self.params,
            self.head,
            hidden.to(self.device, torch.float32),
            anchors.to(self.device).long().view(-1),
            self.block_size,
            self.mask_token_id,
        )
        d.kept = kept
        return d

    def keep_context(self, requests: int = 1) -> KeptContext:
        """An empty context to extend with the target's taps step by step and draft from (`draft(kept=...)`):
        each step projects only the new tokens (the accept loop)."""
        return KeptContext(self._ref(), requests, self.device)

    def _conv(self) -> ConvFn | str:
        return triton_conv_fn() if self.kernels == "triton" else "torch"

    def draft(
        self,
        hidden_states: torch.Tensor | None,
        anchors: torch.Tensor,
        *,
        temperature: float = 0.0,
        seeds: torch.Tensor | None = None,
        kept: KeptContext | None = None,
    ) -> DraftResult:
        """hidden_states [Q, n, n_t·H_t] (taps concatenated in target_layer_ids order; 2-D = one request),
        anchors [Q]. Positions: context 0 … n − 1, the anchor at n; sampled noise is keyed by
        (seed, absolute position, candidate id) as in vLLM's walk. With `kept` (keep_context) the context
        is the one kept there and hidden_states is None."""
        if kept is not None:
            empty = torch.empty(kept.requests, kept.n, 0)
            return self._draft(self._bound(empty, anchors, kept), temperature, seeds)
        assert hidden_states is not None
        if hidden_states.dim() == 2:
            hidden_states = hidden_states.unsqueeze(0)
        if hidden_states.dim() != 3 or hidden_states.shape[-1] != self.spec.fc_in_features:
            raise ConfigError(
                f"hidden states are {list(hidden_states.shape)}; the drafter's fc needs "
                f"[requests, n_ctx, {self.spec.fc_in_features}]",
                hint="concatenate the target taps in target_layer_ids order",
            )
        return self._draft(self._bound(hidden_states, anchors), temperature, seeds)

    def _draft(self, d: BoundDraft, temperature: float, seeds: torch.Tensor | None) -> DraftResult:
        with torch.no_grad():
            g = d.forward(conv=self._conv())
            ids, u = d.candidates(g)
            out = DraftResult(
                context=d.stages["context"],
                hidden=g,
                unary=u,
                candidates=ids,
                greedy=ids[..., 0],
                layers={k: v for k, v in d.stages.items() if k.startswith("layer")},
            )
            if not d.v2:
                return out
            z, scores = d.selector(g, ids, u)
            out.selector_projection, out.edge_scores = z, scores
            out.greedy = self._walk(d, u, ids, z, scores, 0.0, None)[0]
            if temperature > 0:
                seeds = seeds if seeds is not None else torch.zeros(ids.shape[0], dtype=torch.long)
                out.sampled, out.q = self._walk(d, u, ids, z, scores, temperature, seeds.to(self.device))
        return out

    def _walk(
        self,
        d: BoundDraft,
        u: torch.Tensor,
        ids: torch.Tensor,
        z: torch.Tensor,
        scores: torch.Tensor,
        temperature: float,
        seeds: torch.Tensor | None,
    ) -> tuple[torch.Tensor, torch.Tensor | None]:
        positions = torch.full_like(d.anchors, d.n_ctx + 1)  # absolute position of slot 0
        sample: dict[str, Any] = {}
        if temperature > 0:
            sample = dict(temperature=temperature, seeds=seeds, positions=positions)
        if self.kernels == "triton":
            from .triton_walk import triton_walk  # lazy: smoke.triton_walk loads only on this path

            p = self.params
            tok, _, q = triton_walk(
                u,
                ids,
                z,
                p["candidate_selector.predecessor_codebook"],
                p["candidate_selector.successor_codebook"],
                d.anchors,
                **sample,
            )
            return tok, q
        res = walk(scores, ids, **sample)
        return res.tokens, res.q


def load_drafter(
    checkpoint: Any,
    *,
    target: str | Path | None = None,
    block_size: int | None = None,
    device: str | None = None,
    kernels: Kernels | None = None,
    seed: int = 0,
) -> Drafter:
    """Load a drafter (directory, Source or opened Checkpoint) for drafting.

    target: the target model directory whose embed_tokens / lm_head the drafter borrows (else the
    checkpoint's copies, else a seeded random matrix, reported as DF711). kernels: "triton" (the
    default on CUDA) or "torch" (the default on the CPU, where Triton only interprets).
    Raises ConfigError when the tensors cannot fill the drafter (the findings say which).
    """

    ckpt = open_for_smoke(checkpoint)
    dev = pick_device(device)
    kernels = kernels or ("triton" if dev.type == "cuda" else "torch")
    if kernels == "triton":
        prepare_triton(dev)
    spec = ckpt.spec
    block, mask_id, findings = assumptions(spec, block_size)
    weights = load_weights(spec, tensor_files(ckpt), dev)
    borrowed = borrow(spec, weights.borrowed, Path(target) if target is not None else None, seed, dev)
    findings += weights.findings + borrowed.findings
    errors = [f for f in findings if f.severity == "error"]
    if errors:
        raise ConfigError(
            "the drafter cannot be loaded: " + "; ".join(f"{f.code} {f.message}" for f in errors[:3]),
            path=ckpt.source.label,
            hint="run `dflash2-ckpt smoke` on it for every finding",
        )
    return Drafter(
        spec,
        weights.params,
        borrowed.embed,
        borrowed.head,
        block,
        mask_id,
        dev,
        kernels,
        findings=findings,
        embedding_source=borrowed.source,
        label=str(ckpt.source.label),
    )


def draft(
    checkpoint: Any,
    hidden_states: torch.Tensor,
    anchors: torch.Tensor,
    *,
    target: str | Path | None = None,
    block_size: int | None = None,
    temperature: float = 0.0,
    seeds: torch.Tensor | None = None,
    device: str | None = None,
    kernels: Kernels | None = None,
) -> DraftResult:
    """Draft one block per request and return every stage (see DraftResult)."""
    drafter = (
        checkpoint
        if isinstance(checkpoint, Drafter)
        else load_drafter(checkpoint, target=target, block_size=block_size, device=device, kernels=kernels)
    )
    return drafter.draft(hidden_states, anchors, temperature=temperature, seeds=seeds)
