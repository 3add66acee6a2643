"""The torch reference drafter: context path, Qwen3 attention, SiLU MLP, grouped dynamic conv.

One forward drafts one block per request: Q requests, context length n, block length B.
Positions: context tokens 0 … n − 1, block rows n … n + B − 1 (the anchor has no target hidden
state yet, so it continues the sequence).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Collection, Mapping

import torch

from ..engines.causality import intended as intended_causality
from ..formats.spec import DraftSpec
from .conv import grouped_dynamic_conv, identity_conv_weights

ConvFn = Callable[[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, int, int], torch.Tensor]
CONV_MODULES = ("attention_conv", "mlp_conv")


def rms_norm(x: torch.Tensor, w: torch.Tensor, eps: float) -> torch.Tensor:
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * w


def rope_tables(spec: DraftSpec, positions: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """cos/sin [P, hd] for rotate-half RoPE. Only default and linear scaling are modelled; the
    runner reports any other rope type as an assumption (the smoke runs, positions are approximate)."""
    hd = spec.head_dim
    inv = 1.0 / (spec.rope_theta ** (torch.arange(0, hd, 2, dtype=torch.float64, device=positions.device) / hd))
    pos = positions.to(torch.float64)
    scaling = spec.rope_scaling or {}
    if scaling.get("rope_type", scaling.get("type")) == "linear" and scaling.get("factor"):
        pos = pos / float(scaling["factor"])
    ang = torch.outer(pos, inv)
    ang = torch.cat([ang, ang], dim=-1)
    return ang.cos().to(torch.float32), ang.sin().to(torch.float32)


def apply_rope(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    """x [..., P, hd]; cos/sin [P, hd]."""
    half = x.shape[-1] // 2
    rot = torch.cat([-x[..., half:], x[..., :half]], dim=-1)
    return x * cos + rot * sin


def block_mask(n_ctx: int, block: int, causal: bool, window: int | None, device: torch.device) -> torch.Tensor:
    """[B, n_ctx + B] bool, True = query row may attend to that key."""
    qpos = torch.arange(n_ctx, n_ctx + block, device=device).view(-1, 1)
    kpos = torch.arange(n_ctx + block, device=device).view(1, -1)
    dist = qpos - kpos
    allowed = (kpos < n_ctx) | (dist >= 0) if causal else torch.ones_like(dist, dtype=torch.bool)
    if window is not None:
        allowed = allowed & (dist.abs() < window)     # bidirectional sliding masks are symmetric
    return allowed


@dataclass
class ForwardOptions:
    conv: ConvFn | None = grouped_dynamic_conv   # None: run the trunk as DFlash v1 (no conv at all)
    identity: Collection[str] = ()              # conv modules ("layers.0.mlp_conv") forced to identity
    stages: dict[str, torch.Tensor] = field(default_factory=dict)   # filled with intermediate outputs


class RefDrafter:
    def __init__(self, spec: DraftSpec, params: Mapping[str, torch.Tensor], embed: torch.Tensor) -> None:
        self.spec = spec
        self.p = params
        self.embed = embed
        self.causal = intended_causality(spec)

    def _lin(self, name: str, x: torch.Tensor) -> torch.Tensor:
        y = x @ self.p[name + ".weight"].t()
        bias = self.p.get(name + ".bias")
        return y + bias if bias is not None else y

    def context(self, hidden: torch.Tensor) -> torch.Tensor:
        """c = hidden_norm(fc(taps)): [Q, n, H]."""
        return rms_norm(self._lin("fc", hidden), self.p["hidden_norm.weight"], self.spec.rms_norm_eps)

    def _heads(self, x: torch.Tensor, n_heads: int) -> torch.Tensor:
        q_, p_, _ = x.shape
        return x.view(q_, p_, n_heads, self.spec.head_dim).transpose(1, 2)   # [Q, heads, P, hd]

    def _attention(self, i: int, x: torch.Tensor, c: torch.Tensor, rope: tuple[torch.Tensor, torch.Tensor],
                   mask: torch.Tensor) -> torch.Tensor:
        s, pre = self.spec, f"layers.{i}.self_attn."
        eps, n_ctx = s.rms_norm_eps, c.shape[1]
        cos, sin = rope
        q = rms_norm(self._heads(self._lin(pre + "q_proj", x), s.num_attention_heads), self.p[pre + "q_norm.weight"], eps)
        kv_in = torch.cat([c, x], dim=1)      # context keys see no input_layernorm and no conv
        k = rms_norm(self._heads(self._lin(pre + "k_proj", kv_in), s.num_key_value_heads), self.p[pre + "k_norm.weight"], eps)
        v = self._heads(self._lin(pre + "v_proj", kv_in), s.num_key_value_heads)
        q = apply_rope(q, cos[n_ctx:], sin[n_ctx:])
        k = apply_rope(k, cos, sin)
        rep = s.num_attention_heads // s.num_key_value_heads
        k, v = k.repeat_interleave(rep, dim=1), v.repeat_interleave(rep, dim=1)
        att = (q @ k.transpose(-1, -2)) * s.head_dim ** -0.5
        att = torch.softmax(att.masked_fill(~mask, float("-inf")), dim=-1)
        out = (att @ v).transpose(1, 2).reshape(x.shape[0], x.shape[1], -1)
        return self._lin(pre + "o_proj", out)

    def _mlp(self, i: int, x: torch.Tensor) -> torch.Tensor:
        pre = f"layers.{i}.mlp."
        return self._lin(pre + "down_proj", torch.nn.functional.silu(self._lin(pre + "gate_proj", x))
                         * self._lin(pre + "up_proj", x))

    def _conv_weights(self, module: str, opts: ForwardOptions) -> tuple[torch.Tensor, torch.Tensor]:
        base = self.p[module + ".base_kernel"]
        if module in opts.identity:
            return identity_conv_weights(base.shape[1], base.shape[2], self.spec.conv_groups or 1, like=base)
        return base, self.p[module + ".kernel_projection.weight"]

    def _sublayer(self, module: str, h: torch.Tensor, fn: Callable[[torch.Tensor], torch.Tensor],
                  opts: ForwardOptions, block: int) -> torch.Tensor:
        if opts.conv is None or self.spec.version != "v2":   # DFlash v1 has no conv at all
            return fn(h)
        base, proj = self._conv_weights(module, opts)
        q_, b_, hid = h.shape
        flat = h.reshape(q_ * b_, hid)
        pre = opts.conv(flat, flat, base, proj, 0, block).view(q_, b_, hid)
        out = fn(pre)
        return opts.conv(out.reshape(q_ * b_, hid), flat, base, proj, 1, block).view(q_, b_, hid)

    def forward(self, hidden: torch.Tensor, anchors: torch.Tensor, block: int, mask_id: int,
                opts: ForwardOptions | None = None) -> torch.Tensor:
        """g = norm(r) at block rows 1 … B − 1: [Q, B − 1, H]."""
        opts = opts or ForwardOptions()
        s, eps = self.spec, self.spec.rms_norm_eps
        q_, n_ctx, _ = hidden.shape
        dev = hidden.device
        c = self.context(hidden)
        opts.stages["context"] = c
        ids = torch.full((q_, block), mask_id, dtype=torch.long, device=dev)
        ids[:, 0] = anchors.to(dev)
        r = self.embed[ids] * s.input_embedding_scale
        rope = rope_tables(s, torch.arange(n_ctx + block, device=dev))
        for i in range(s.num_hidden_layers):
            slides = s.layer_types[i] == "sliding_attention" and bool(s.sliding_window)
            mask = block_mask(n_ctx, block, self.causal[i], s.sliding_window if slides else None, dev)
            pre = f"layers.{i}."
            h = rms_norm(r, self.p[pre + "input_layernorm.weight"], eps)
            def attend(a: torch.Tensor, i: int = i, m: torch.Tensor = mask) -> torch.Tensor:
                return self._attention(i, a, c, rope, m)

            def mlp(a: torch.Tensor, i: int = i) -> torch.Tensor:
                return self._mlp(i, a)
            r = r + self._sublayer(pre + "attention_conv", h, attend, opts, block)
            h = rms_norm(r, self.p[pre + "post_attention_layernorm.weight"], eps)
            r = r + self._sublayer(pre + "mlp_conv", h, mlp, opts, block)
            opts.stages[f"layer{i}"] = r
        g = rms_norm(r, self.p["norm.weight"], eps)[:, 1:]
        opts.stages["final_norm"] = g
        return g
