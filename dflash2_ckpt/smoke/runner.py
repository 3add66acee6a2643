"""The smoke runner: load, draft, cross-check, and gather one SmokeReport."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

import torch

from ..errors import ConfigError
from ..findings import Finding
from ..formats.spec import DraftSpec
from . import checks, influence
from .conv import grouped_dynamic_conv, is_identity
from .device import pick_device, prepare_triton, sync
from .drafter import CONV_MODULES, ConvFn, ForwardOptions, KeptContext, RefDrafter
from .embedding import borrow
from .inputs import make_inputs
from .report import SmokeReport
from .walk import candidates, edge_scores, first_divergence_gap, gumbel_noise, walk
from .weights import load_weights

EMITS: frozenset[str] = frozenset({"DF712"})

DEFAULT_BLOCK = 8
TEMPERATURE = 1.0
_ROPE_MODELLED = (None, "default", "linear")


# stages timed by a v2 smoke, for the progress callback's total (v1 runs the first four)
# (forward_triton_conv on a GPU, conv_triton_sample on a CPU: one of the two runs)
STAGES = (
    "load",
    "embedding",
    "forward",
    "candidates",
    "selector_scores",
    "walk_torch",
    "walk_triton",
    "walk_triton_sampled",
    "rerun",
    "forward_triton_conv",
    "ablation",
)
CPU_STAGES = tuple("conv_triton_sample" if s == "forward_triton_conv" else s for s in STAGES)
Progress = Callable[[str, int, int], None]


class _Timer:
    def __init__(
        self,
        device: torch.device,
        into: dict[str, float],
        progress: Progress | None = None,
        total: int = len(STAGES),
    ) -> None:
        self.device, self.into, self.progress, self.total, self.done = device, into, progress, total, 0

    @contextmanager
    def __call__(self, stage: str) -> Iterator[None]:
        if self.progress is not None:
            self.progress(stage, self.done, self.total)
        self.done += 1
        sync(self.device)
        t0 = time.perf_counter()
        yield
        sync(self.device)
        self.into[stage] = self.into.get(stage, 0.0) + time.perf_counter() - t0


def _buildable(spec: DraftSpec) -> None:
    """Geometry the forward cannot run without; `verify` reports each as a DF1xx finding."""
    why = []
    if spec.num_key_value_heads < 1 or spec.num_attention_heads % spec.num_key_value_heads:
        why.append("num_key_value_heads does not divide num_attention_heads")
    if spec.version == "v2":
        if not spec.conv_kernel_size or spec.conv_groups is None:
            why.append("conv_kernel_size / conv_group_size are missing or do not divide hidden_size")
        if not spec.selector_rank or not spec.selector_top_k or spec.selector_top_k > spec.vocab_size:
            why.append("selector_rank / selector_top_k are missing or top-K exceeds vocab_size")
    if why:
        raise ConfigError(
            "the drafter cannot be built: " + "; ".join(why), hint="run `dflash2-ckpt verify` for details"
        )


def assumptions(spec: DraftSpec, block_size: int | None) -> tuple[int, int, list[Finding]]:
    _buildable(spec)
    found = []
    block = block_size or spec.block_size
    if not block:
        block = DEFAULT_BLOCK
        found.append(
            Finding(
                "DF712",
                f"no block_size in the config and none given: drafted blocks of {block}",
                field="block_size",
                details={"block_size": block},
            )
        )
    mask = spec.mask_token_id
    if mask is None or not 0 <= mask < spec.vocab_size:
        mask = spec.vocab_size - 1
        found.append(
            Finding(
                "DF712",
                f"mask_token_id {spec.mask_token_id} cannot be embedded: used {mask} for the smoke only",
                field="mask_token_id",
                details={"used": mask},
            )
        )
    rope = dict(spec.rope_scaling or {})
    kind = rope.get("rope_type", rope.get("type"))
    if kind not in _ROPE_MODELLED:
        found.append(
            Finding(
                "DF712",
                f"RoPE type {kind!r} is not modelled by the smoke: default RoPE used, "
                "so positions are approximate",
                field="rope_scaling",
                details={"rope_type": kind},
            )
        )
    return int(block), int(mask), found


class BoundDraft:
    """One smoke input set bound to the drafter, so checks can re-run pieces with a module removed."""

    def __init__(
        self,
        spec: DraftSpec,
        drafter: RefDrafter,
        params: Mapping[str, torch.Tensor],
        head: torch.Tensor,
        hidden: torch.Tensor,
        anchors: torch.Tensor,
        block: int,
        mask_id: int,
    ) -> None:
        self.spec, self.drafter, self.params, self.head = spec, drafter, params, head
        self.hidden, self.anchors, self.block, self.mask_id = hidden, anchors, block, mask_id
        self.v2 = spec.version == "v2"
        self.k = (spec.selector_top_k or 1) if self.v2 else 1
        self.stages: dict[str, torch.Tensor] = {}
        self.ids = self.u = torch.empty(0)
        self.d2t: torch.Tensor | None = None
        self.kept: KeptContext | None = None  # the context kept between decoding steps (accept)

    @property
    def n_ctx(self) -> int:
        return self.kept.n if self.kept is not None else int(self.hidden.shape[1])

    def forward(self, conv: ConvFn | None | str = "torch", identity: tuple[str, ...] = ()) -> torch.Tensor:
        opts = ForwardOptions(conv=grouped_dynamic_conv if conv == "torch" else conv, identity=identity)  # type: ignore[arg-type]
        g = self.drafter.forward(self.hidden, self.anchors, self.block, self.mask_id, opts, kept=self.kept)
        self.stages = opts.stages
        return g

    def candidates(self, g: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        ids, u = candidates(
            g, self.head, self.k, self.spec.output_multiplier, self.spec.final_logit_softcapping
        )
        if self.d2t is not None:  # a reduced vocabulary: draft id -> target id = id + d2t[id]
            ids = ids + self.d2t[ids]
        return ids, u

    def selector(
        self, g: torch.Tensor, ids: torch.Tensor, u: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        p = self.params
        z = g @ p["candidate_selector.hidden_projection.weight"].t()
        return z, edge_scores(
            u,
            ids,
            z,
            p["candidate_selector.predecessor_codebook"],
            p["candidate_selector.successor_codebook"],
            self.anchors,
        )

    def greedy_path(self, g: torch.Tensor) -> torch.Tensor:
        ids, u = self.candidates(g)
        if not self.v2:
            return ids[..., 0]
        return walk(self.selector(g, ids, u)[1], ids).tokens


def smoke(
    spec: DraftSpec,
    files: Mapping[str, Path],
    *,
    label: str,
    target: Path | None = None,
    hidden_states: Path | None = None,
    block_size: int | None = None,
    seed: int = 0,
    device: str | None = None,
    requests: int = 2,
    progress: Progress | None = None,
) -> SmokeReport:
    """Run the smoke forward on a parsed spec and its tensor files (tensor name -> safetensors file)."""
    dev = pick_device(device)
    mode = prepare_triton(dev)

    timings: dict[str, float] = {}
    timer = _Timer(dev, timings, progress, len(STAGES) if spec.version == "v2" else 5)
    block, mask_id, findings = assumptions(spec, block_size)
    with timer("load"):
        weights = load_weights(spec, files, dev)
    findings += weights.findings
    with timer("embedding"):
        borrowed = borrow(spec, weights.borrowed, target, seed, dev)
    findings += borrowed.findings
    inputs = make_inputs(spec, block_size=block, seed=seed, hidden_states=hidden_states, requests=requests)
    report = SmokeReport(
        label,
        spec.version,
        str(dev),
        mode,
        borrowed.source,
        findings=findings,
        timings=timings,
        inputs={
            "requests": inputs.requests,
            "context_len": inputs.context_len,
            "block_size": block,
            "hidden_states": inputs.source,
            "seed": seed,
            "mask_token_id": mask_id,
        },
    )
    if not weights.complete or any(f.code == "DF713" for f in borrowed.findings):
        return report  # the findings say which parameter could not be filled; nothing to run

    drafter = RefDrafter(spec, weights.params, borrowed.embed)
    anchors = inputs.anchors.to(dev)
    own_head = weights.params.get("lm_head.weight")  # a reduced vocabulary scores with its own head
    d = BoundDraft(
        spec,
        drafter,
        weights.params,
        borrowed.head if own_head is None else own_head,
        inputs.hidden.to(dev),
        anchors,
        block,
        mask_id,
    )
    if own_head is not None:
        d.d2t = weights.maps.get("d2t")
        report.embedding_source["lm_head"] = "checkpoint (the drafter's own, reduced vocabulary)"
    report.findings += checks.in_vocab("anchor ids", anchors, spec.vocab_size)
    if any(f.code == "DF704" for f in report.findings):
        return report
    sample = _ConvSample() if mode == "interpret" else None
    with timer("forward"):
        g = d.forward(conv=sample) if sample is not None else d.forward()
    stages = dict(d.stages)
    with timer("candidates"):
        ids, u = d.candidates(g)
    stages["candidate_scores"] = u
    report.stages_run += ["forward", "candidates"]
    if not d.v2:
        greedy = ids[..., 0]
        with timer("rerun"):
            again = d.greedy_path(d.forward())
        report.findings += checks.nonfinite(stages) + checks.in_vocab("greedy path", greedy, spec.vocab_size)
        report.findings += checks.deterministic("greedy path", greedy, again)
        report.stages_run.append("rerun")
        report.paths = [
            {"input": i, "anchor": int(anchors[i]), "greedy": greedy[i].tolist()}
            for i in range(inputs.requests)
        ]
        return report

    d.ids, d.u = ids, u
    with timer("selector_scores"):
        z, scores = d.selector(g, ids, u)
    stages.update(selector_projection=z, edge_scores=scores)
    report.findings += checks.nonfinite(stages)
    if any(f.code == "DF703" for f in report.findings):
        return report
    tok, tok_s, seeds = _walks(report, d, timer, inputs.seeds.to(dev), inputs.context_len, z, scores)
    if sample is None:  # a GPU: the whole forward again with the Triton conv in every layer
        with timer("forward_triton_conv"):
            g_tr = d.forward(conv=triton_conv_fn())
        report.findings += checks.kernel_match("grouped dynamic conv (whole forward)", g, g_tr)
    else:  # the interpreter: the Triton conv on the sample the torch forward recorded
        with timer("conv_triton_sample"):
            report.findings += sample.check(triton_conv_fn())
        report.inputs["triton_conv"] = sample.describe()
    with timer("ablation"):
        _ablate(report, d, g, tok, scores, u, z, seed)
    report.stages_run += ["selector", "walk_torch", "walk_triton", "conv_triton", "rerun", "ablation"]
    report.paths = [
        {
            "input": i,
            "anchor": int(anchors[i]),
            "greedy": tok[i].tolist(),
            "sampled": tok_s[i].tolist(),
            "temperature": TEMPERATURE,
            "seed": int(seeds[i]),
        }
        for i in range(inputs.requests)
    ]
    return report


class _ConvSample:
    """The torch conv (every layer, every row) that keeps a sample of its calls for the Triton kernel: the
    first layer's four calls (attention_conv and mlp_conv, both sides), one block each, with their real
    inputs and weights. Under TRITON_INTERPRET=1 the interpreter pays per program and loop trip, so the
    whole forward through it took minutes at real sizes (369 s of an 8.5 min smoke); the sample costs
    4 x (hidden / 128)^2 trips and still compares every channel, tap and group of a real block."""

    CALLS = 4

    def __init__(self) -> None:
        self.calls: list[tuple[torch.Tensor, ...]] = []
        self.side_of: list[int] = []
        self.block = 0

    def __call__(
        self, y: torch.Tensor, h: torch.Tensor, base: torch.Tensor, proj: torch.Tensor, side: int, block: int
    ) -> torch.Tensor:
        out = grouped_dynamic_conv(y, h, base, proj, side, block)
        if len(self.calls) < self.CALLS:
            self.calls.append((y[:block].clone(), h[:block].clone(), base, proj, out[:block].clone()))
            self.side_of.append(side)
            self.block = block
        return out

    def check(self, conv: ConvFn) -> list[Finding]:
        found: list[Finding] = []
        names = ("attention_conv", "attention_conv", "mlp_conv", "mlp_conv")
        for (y, h, base, proj, ref), side, name in zip(self.calls, self.side_of, names):
            got = conv(y, h, base, proj, side, self.block)
            found += checks.kernel_match(
                f"grouped dynamic conv (layers.0.{name} side {side}, one block)", ref, got
            )
        return found

    def describe(self) -> str:
        return (
            f"sample: layers.0 attention_conv and mlp_conv, both sides, one block of {self.block} rows "
            "(the torch conv ran every layer)"
        )


def triton_conv_fn() -> ConvFn:
    from .triton_conv import triton_grouped_dynamic_conv  # only once the Triton mode is set

    return triton_grouped_dynamic_conv


def _walks(
    report: SmokeReport,
    d: BoundDraft,
    timer: _Timer,
    seeds: torch.Tensor,
    n_ctx: int,
    z: torch.Tensor,
    scores: torch.Tensor,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Torch vs Triton walks, greedy and sampled, then a same-seed rerun of the whole draft."""
    from .triton_walk import triton_walk  # lazy: smoke.triton_walk loads only on this path

    p, ids, u, anchors = d.params, d.ids, d.u, d.anchors
    a_cb, b_cb = p["candidate_selector.predecessor_codebook"], p["candidate_selector.successor_codebook"]
    positions = torch.full_like(anchors, n_ctx + 1)  # absolute position of slot 0 (block row 1)
    sample = dict(temperature=TEMPERATURE, seeds=seeds, positions=positions)
    with timer("walk_torch"):
        ref = walk(scores, ids)
        ref_s = walk(scores, ids, **sample)  # type: ignore[arg-type]
    with timer("walk_triton"):
        tok, picks, _ = triton_walk(u, ids, z, a_cb, b_cb, anchors)
    with timer("walk_triton_sampled"):
        tok_s, picks_s, q = triton_walk(u, ids, z, a_cb, b_cb, anchors, **sample)  # type: ignore[arg-type]
    assert q is not None and ref_s.q is not None
    slot_pos = positions.view(-1, 1) + torch.arange(ids.shape[1], device=ids.device)
    keys = scores / TEMPERATURE + gumbel_noise(seeds.view(-1, 1, 1), slot_pos.unsqueeze(-1), ids).unsqueeze(2)
    report.findings += checks.walk_match(
        "greedy walk", ref.tokens, tok, first_divergence_gap(scores, ref, picks), float(scores.abs().max())
    )
    report.findings += checks.walk_match(
        "sampled walk",
        ref_s.tokens,
        tok_s,
        first_divergence_gap(keys, ref_s, picks_s),
        float(keys.abs().max()),
    )
    report.findings += checks.kernel_match("sampled proposal q", ref_s.q, q) + checks.q_normalised(q)
    report.findings += checks.in_vocab("greedy path", tok, d.spec.vocab_size)
    report.findings += checks.in_vocab("sampled path", tok_s, d.spec.vocab_size)
    with timer("rerun"):
        g2 = d.forward()
        ids2, u2 = d.candidates(g2)
        z2 = d.selector(g2, ids2, u2)[0]
        tok2 = triton_walk(u2, ids2, z2, a_cb, b_cb, anchors)[0]
        tok_s2 = triton_walk(u2, ids2, z2, a_cb, b_cb, anchors, **sample)[0]  # type: ignore[arg-type]
    report.findings += checks.deterministic("greedy path", tok, tok2)
    report.findings += checks.deterministic("sampled path", tok_s, tok_s2)
    return tok, tok_s, seeds


def _ablate(
    report: SmokeReport,
    d: BoundDraft,
    g: torch.Tensor,
    greedy: torch.Tensor,
    scores: torch.Tensor,
    u: torch.Tensor,
    z: torch.Tensor,
    seed: int,
) -> None:
    """Remove each v2 module in turn and measure what changes (DF705-DF707)."""

    spec, p = d.spec, d.params
    convs: dict[str, dict[str, float | bool]] = {}
    for i in range(spec.num_hidden_layers):
        for mod in CONV_MODULES:
            name = f"layers.{i}.{mod}"
            g_off = d.forward(identity=(name,))
            rel, slots = checks.rel_change(g, g_off), checks.slot_fraction(greedy, d.greedy_path(g_off))
            ident = is_identity(p[name + ".base_kernel"], p[name + ".kernel_projection.weight"])
            convs[name] = {"relative_change": rel, "slots_changed": slots, "identity_init": ident}
            report.findings += checks.inert_conv(name, ident, rel, slots)
    every = tuple(convs)
    g_id = d.forward(identity=every)
    all_slots = checks.slot_fraction(greedy, d.greedy_path(g_id))
    report.findings += checks.identity_equivalence(checks.rel_change(d.forward(conv=None), g_id))
    # selector off = codebooks zero: S = u, so the walk is the independent per-slot argmax
    independent = d.ids.gather(-1, u.argmax(-1, keepdim=True)).squeeze(-1)
    sel_slots = checks.slot_fraction(greedy, independent)
    a_cb, b_cb = p["candidate_selector.predecessor_codebook"], p["candidate_selector.successor_codebook"]
    reason = influence.selector_inert_reason(a_cb, b_cb, p["candidate_selector.hidden_projection.weight"])
    report.findings += checks.inert_selector(reason)
    report.findings += influence.conv_finding(convs, all_slots, greedy.numel())
    sampled = None
    if reason is None:
        sampled = influence.selector_influence(d.ids, u, z, a_cb, b_cb, spec.vocab_size, seed)
        report.findings += influence.selector_finding(sampled, influence.CONTEXTS, greedy.shape[1])
    report.ablation = {
        "conv": convs,
        "all_convs_slots_changed": all_slots,
        "selector_slots_changed": sel_slots,
        "selector_sampled_slots_changed": sampled,
        "selector_sampled_contexts": influence.CONTEXTS if sampled is not None else 0,
    }
