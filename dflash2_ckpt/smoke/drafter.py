"""The torch reference drafter: context path, Qwen3 attention, SiLU MLP, grouped dynamic conv.

One forward drafts one block per request: Q requests, context length n, block length B.
Positions: context tokens 0 … n − 1, block rows n … n + B − 1 (the anchor has no target hidden
state yet, so it continues the sequence).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field

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
    inv = 1.0 / (
        spec.rope_theta ** (torch.arange(0, hd, 2, dtype=torch.float64, device=positions.device) / hd)
    )
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


def block_mask(
    n_ctx: int, block: int, causal: bool, window: int | None, device: torch.device
) -> torch.Tensor:
    """[B, n_ctx + B] bool, True = query row may attend to that key."""
    qpos = torch.arange(n_ctx, n_ctx + block, device=device).view(-1, 1)
    kpos = torch.arange(n_ctx + block, device=device).view(1, -1)
    dist = qpos - kpos
    allowed = (kpos < n_ctx) | (dist >= 0) if causal else torch.ones_like(dist, dtype=torch.bool)
    if window is not None:
        allowed = allowed & (dist.abs() < window)  # bidirectional sliding masks are symmetric
    return allowed


@dataclass
class ForwardOptions:
    conv: ConvFn | None = grouped_dynamic_conv  # None: run the trunk as DFlash v1 (no conv at all)
    identity: Collection[str] = ()  # conv modules ("layers.0.mlp_conv") forced to identity
    stages: dict[str, torch.Tensor] = field(default_factory=dict)  # filled with intermediate outputs


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
        return x.view(q_, p_, n_heads, self.spec.head_dim).transpose(1, 2)  # [Q, heads, P, hd]

    def keys_values(
        self, i: int, x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Layer i's keys (normed, rotated at the rows' positions cos/sin) and values of rows x [Q, P, H]."""
        s, pre = self.spec, f"layers.{i}.self_attn."
        k = rms_norm(
            self._heads(self._lin(pre + "k_proj", x), s.num_key_value_heads),
            self.p[pre + "k_norm.weight"],
            s.rms_norm_eps,
        )
        return apply_rope(k, cos, sin), self._heads(self._lin(pre + "v_proj", x), s.num_key_value_heads)

    def _attention(
        self,
        i: int,
        x: torch.Tensor,
        c: torch.Tensor,
        rope: tuple[torch.Tensor, torch.Tensor],
        mask: torch.Tensor,
        ctx_kv: tuple[torch.Tensor, torch.Tensor] | None = None,
    ) -> torch.Tensor:
        s, pre = self.spec, f"layers.{i}.self_attn."
        eps, n_ctx = s.rms_norm_eps, c.shape[1]
        cos, sin = rope
        q = rms_norm(
            self._heads(self._lin(pre + "q_proj", x), s.num_attention_heads),
            self.p[pre + "q_norm.weight"],
            eps,
        )
        if ctx_kv is None:
            kv_in = torch.cat([c, x], dim=1)  # context keys see no input_layernorm and no conv
            k = rms_norm(
                self._heads(self._lin(pre + "k_proj", kv_in), s.num_key_value_heads),
                self.p[pre + "k_norm.weight"],
                eps,
            )
            v = self._heads(self._lin(pre + "v_proj", kv_in), s.num_key_value_heads)
            k = apply_rope(k, cos, sin)
            cos, sin = cos[n_ctx:], sin[n_ctx:]
        else:  # the context's keys and values kept from earlier steps
            kx, vx = self.keys_values(i, x, cos, sin)  # rope: the block rows' table only
            k, v = torch.cat([ctx_kv[0], kx], dim=2), torch.cat([ctx_kv[1], vx], dim=2)
        q = apply_rope(q, cos, sin)
        rep = s.num_attention_heads // s.num_key_value_heads
        k, v = k.repeat_interleave(rep, dim=1), v.repeat_interleave(rep, dim=1)
        att = (q @ k.transpose(-1, -2)) * s.head_dim**-0.5
        att = torch.softmax(att.masked_fill(~mask, float("-inf")), dim=-1)
        out = (att @ v).transpose(1, 2).reshape(x.shape[0], x.shape[1], -1)
        return self._lin(pre + "o_proj", out)

    def _mlp(self, i: int, x: torch.Tensor) -> torch.Tensor:
        pre = f"layers.{i}.mlp."
        return self._lin(
            pre + "down_proj",
            torch.nn.functional.silu(self._lin(pre + "gate_proj", x)) * self._lin(pre + "up_proj", x),
        )

    def _conv_weights(self, module: str, opts: ForwardOptions) -> tuple[torch.Tensor, torch.Tensor]:
        base = self.p[module + ".base_kernel"]
        if module in opts.identity:
            return identity_conv_weights(base.shape[1], base.shape[2], self.spec.conv_groups or 1, like=base)
        return base, self.p[module + ".kernel_projection.weight"]

    def _sublayer(
        self,
        module: str,
        h: torch.Tensor,
        fn: Callable[[torch.Tensor], torch.Tensor],
        opts: ForwardOptions,
        block: int,
    ) -> torch.Tensor:
        if opts.conv is None or self.spec.version != "v2":  # DFlash v1 has no conv at all
            return fn(h)
        base, proj = self._conv_weights(module, opts)
        q_, b_, hid = h.shape
        flat = h.reshape(q_ * b_, hid)
        pre = opts.conv(flat, flat, base, proj, 0, block).view(q_, b_, hid)
        out = fn(pre)
        return opts.conv(out.reshape(q_ * b_, hid), flat, base, proj, 1, block).view(q_, b_, hid)

    def forward(
        self,
        hidden: torch.Tensor | None,
        anchors: torch.Tensor,
        block: int,
        mask_id: int,
        opts: ForwardOptions | None = None,
        kept: KeptContext | None = None,
    ) -> torch.Tensor:
        """g = norm(r) at block rows 1 … B − 1: [Q, B − 1, H]. With `kept`, the context (its projection and
        every layer's keys and values) comes from earlier steps instead of `hidden`."""
        opts = opts or ForwardOptions()
        s, eps = self.spec, self.spec.rms_norm_eps
        if kept is not None:
            c = kept.context
            dev = c.device
        else:
            assert hidden is not None
            c = self.context(hidden)
            dev = hidden.device
        q_, n_ctx = c.shape[0], c.shape[1]
        opts.stages["context"] = c
        ids = torch.full((q_, block), mask_id, dtype=torch.long, device=dev)
        ids[:, 0] = anchors.to(dev)
        r = self.embed[ids] * s.input_embedding_scale
        # kept context: its keys are rotated already, so only the block rows' table is needed
        rope = rope_tables(s, torch.arange(0 if kept is None else n_ctx, n_ctx + block, device=dev))
        for i in range(s.num_hidden_layers):
            slides = s.layer_types[i] == "sliding_attention" and bool(s.sliding_window)
            mask = block_mask(n_ctx, block, self.causal[i], s.sliding_window if slides else None, dev)
            pre = f"layers.{i}."
            h = rms_norm(r, self.p[pre + "input_layernorm.weight"], eps)

            def attend(a: torch.Tensor, i: int = i, m: torch.Tensor = mask) -> torch.Tensor:
                return self._attention(i, a, c, rope, m, kept.layer(i) if kept is not None else None)

            def mlp(a: torch.Tensor, i: int = i) -> torch.Tensor:
                return self._mlp(i, a)

            r = r + self._sublayer(pre + "attention_conv", h, attend, opts, block)
            h = rms_norm(r, self.p[pre + "post_attention_layernorm.weight"], eps)
            r = r + self._sublayer(pre + "mlp_conv", h, mlp, opts, block)
            opts.stages[f"layer{i}"] = r
        g = rms_norm(r, self.p["norm.weight"], eps)[:, 1:]
        opts.stages["final_norm"] = g
        return g


class KeptContext:
    """The drafter's view of the target context, kept between decoding steps: hidden_norm(fc(taps)) and every
    layer's context keys (normed, rotated) and values. `extend` projects only the new taps and appends them,
    so a step costs the block, not the whole context again. Storage grows by doubling (amortised copies)."""

    def __init__(self, drafter: RefDrafter, requests: int, device: torch.device) -> None:
        self.drafter, self.requests, self.device = drafter, requests, device
        self.n = 0
        s = drafter.spec
        self._c = torch.empty(requests, 0, s.hidden_size, device=device)
        self._k: list[torch.Tensor] = []
        self._v: list[torch.Tensor] = []

    @property
    def context(self) -> torch.Tensor:
        return self._c[:, : self.n]

    def layer(self, i: int) -> tuple[torch.Tensor, torch.Tensor]:
        return self._k[i][:, :, : self.n], self._v[i][:, :, : self.n]

    @staticmethod
    def _grow(buf: torch.Tensor, dim: int, need: int) -> torch.Tensor:
        if buf.shape[dim] >= need:
            return buf
        shape = list(buf.shape)
        shape[dim] = max(need, 2 * shape[dim], 64)
        out = torch.empty(shape, dtype=buf.dtype, device=buf.device)
        out.narrow(dim, 0, buf.shape[dim]).copy_(buf)
        return out

    @torch.no_grad()
    def extend(self, taps: torch.Tensor) -> None:
        """Append the target's taps of m more committed tokens: taps [Q, m, n_t·H_t] (or [m, n_t·H_t])."""
        if taps.dim() == 2:
            taps = taps.unsqueeze(0)
        d, s = self.drafter, self.drafter.spec
        c = d.context(taps.to(self.device, torch.float32))
        n1 = self.n + c.shape[1]
        cos, sin = rope_tables(s, torch.arange(self.n, n1, device=self.device))
        self._c = self._grow(self._c, 1, n1)
        self._c[:, self.n : n1] = c
        for i in range(s.num_hidden_layers):
            k, v = d.keys_values(i, c, cos, sin)
            if len(self._k) <= i:
                self._k.append(torch.empty(*k.shape[:2], 0, k.shape[3], device=self.device))
                self._v.append(torch.empty(*v.shape[:2], 0, v.shape[3], device=self.device))
            self._k[i], self._v[i] = self._grow(self._k[i], 2, n1), self._grow(self._v[i], 2, n1)
            self._k[i][:, :, self.n : n1], self._v[i][:, :, self.n : n1] = k, v
        self.n = n1
