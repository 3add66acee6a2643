"""The target model through transformers: load it, prefill, verify a block in one forward, read the taps.

Taps follow docs/contract.md#dflash_config: target_layer_ids are decoder-layer OUTPUTS, i.e. HF
hidden_states[id + 1]
(hidden_states[0] is the embedding output). The target keeps a KV cache, so a verification step costs
one forward over the block only, as in a serving engine.
"""

from __future__ import annotations

import importlib
import inspect
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import torch

from ..errors import ConfigError, SourceError

# what a transformers model directory needs besides its weights
_SMALL = (
    "config.json",
    "generation_config.json",
    "tokenizer.json",
    "tokenizer_config.json",
    "special_tokens_map.json",
    "chat_template.jinja",
    "tokenizer.model",
    "vocab.json",
    "merges.txt",
    "model.safetensors.index.json",
    "prompts.jsonl",
)


def resolve_target(
    target: str | os.PathLike[str], *, revision: str | None = None, token: str | None = None
) -> Path:
    """A local model directory as is; a Hub repo id through the project's source layer (huggingface_hub's
    cache), downloading config, tokenizer and safetensors weights only."""
    local = Path(os.path.expanduser(str(target)))
    if local.is_dir():
        return local
    from ..checkpoint.open_source import open_source  # lazy: checkpoint.open_source loads only on this path

    src = open_source(str(target), revision, token, require_weights=False)
    files = src.list_files()
    if "config.json" not in files:
        raise SourceError(
            "the target has no config.json",
            path=str(target),
            hint="give the target model's directory or Hub repo id",
        )
    weights = [f for f in files if f.endswith(".safetensors")]
    if not weights:
        raise SourceError("the target has no safetensors weights", path=str(target))
    paths = [src.local_path(f) or src.download(f) for f in files if f in _SMALL or f in weights]
    if paths[0] is None:
        raise SourceError("the target's files could not be fetched to disk", path=str(target))
    return paths[0].parent


class Target:
    """A causal LM with its tokenizer, its tap layers and one request's KV cache."""

    def __init__(
        self, model: Any, tokenizer: Any, taps: Sequence[int], device: torch.device, label: str
    ) -> None:
        self.model, self.tokenizer, self.device, self.label = model, tokenizer, device, label
        layers = int(model.config.get_text_config().num_hidden_layers)
        bad = [t for t in taps if not 0 <= t < layers]
        if bad:
            raise ConfigError(
                f"target_layer_ids {list(taps)} name layers the target does not have (it has {layers})",
                field="dflash_config.target_layer_ids",
                hint="the drafter was trained for another target",
            )
        self.taps = list(taps)
        self.num_layers = layers
        self._cache_kw = (
            "cache" if "cache" in inspect.signature(model.forward).parameters else "past_key_values"
        )
        self.cache: Any = None

    @property
    def vocab_size(self) -> int:
        return int(self.model.get_output_embeddings().weight.shape[0])

    def embed_and_head(self) -> tuple[torch.Tensor, torch.Tensor]:
        return (
            self.model.get_input_embeddings().weight.detach().float(),
            self.model.get_output_embeddings().weight.detach().float(),
        )

    def eos_ids(self) -> set[int]:
        eos = getattr(self.model.generation_config, "eos_token_id", None) or self.model.config.eos_token_id
        return set(eos if isinstance(eos, list) else [eos] if eos is not None else [])

    def reset(self) -> None:
        from transformers import DynamicCache  # heavy: transformers loads only when this runs

        self.cache = DynamicCache(config=self.model.config)

    def cached(self) -> int:
        return int(self.cache.get_seq_length()) if self.cache is not None else 0

    def crop(self, keep: int) -> None:
        """Drop the cache entries of rejected block rows (negative crop = remove that many)."""
        extra = self.cached() - keep
        if extra > 0:
            self.cache.crop(-extra)

    @property
    def tie_tolerance(self) -> float:
        """Logit gap below which two forwards of different shapes may round an argmax differently."""
        return 1e-3 if self.model.dtype == torch.float32 else 0.5

    @torch.no_grad()
    def logit_gap(self, ids: Sequence[int], a: int, b: int) -> float:
        """|logit(a) - logit(b)| after `ids`, from one fresh forward (the cache is left alone)."""
        x = torch.tensor([list(ids)], dtype=torch.long, device=self.device)
        logits = self.model(input_ids=x, use_cache=False).logits[0, -1].float()
        return abs(float(logits[a] - logits[b]))

    @torch.no_grad()
    def forward(self, ids: Sequence[int], *, taps: bool = True) -> tuple[torch.Tensor, torch.Tensor | None]:
        """Run `ids` after the cached tokens: (greedy next token per row [k], taps [k, n_t·H] float32)."""
        x = torch.tensor([list(ids)], dtype=torch.long, device=self.device)
        out = self.model(
            input_ids=x, use_cache=True, output_hidden_states=taps, **{self._cache_kw: self.cache}
        )
        nxt = out.logits[0].float().argmax(-1)
        if not taps:
            return nxt, None
        hs = out.hidden_states
        return nxt, torch.cat([hs[t + 1][0] for t in self.taps], dim=-1).float()

    @property
    def pad_id(self) -> int:
        pad = getattr(self.model.config, "pad_token_id", None)
        return int(pad) if isinstance(pad, int) else 0  # masked out wherever it pads

    @torch.no_grad()
    def forward_rows(
        self, rows: Sequence[Sequence[int]], valid: torch.Tensor, positions: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Several requests' tokens after the cached ones, one forward: rows [Q][k] (equal lengths),
        valid [Q, cached + k] (False: a padding or rejected entry no row may attend to), positions [Q, k].
        Returns (greedy next token [Q, k], taps [Q, k, n_t·H] float32)."""
        x = torch.tensor([list(r) for r in rows], dtype=torch.long, device=self.device)
        out = self.model(
            input_ids=x,
            attention_mask=valid.to(self.device, torch.long),
            position_ids=positions.to(self.device),
            use_cache=True,
            output_hidden_states=True,
            **{self._cache_kw: self.cache},
        )
        hs = out.hidden_states
        return out.logits.float().argmax(-1), torch.cat([hs[t + 1] for t in self.taps], dim=-1).float()


def load_target(
    target: str | os.PathLike[str],
    taps: Sequence[int],
    device: torch.device,
    *,
    revision: str | None = None,
    token: str | None = None,
    label: str | None = None,
) -> Target:
    """bf16 on a GPU, fp32 on the CPU; eager attention so the verify forward is plain and deterministic."""
    # heavy: transformers loads only when this runs
    from transformers import AutoModelForCausalLM, AutoTokenizer

    root = resolve_target(target, revision=revision, token=token)
    dtype = torch.bfloat16 if device.type == "cuda" else torch.float32
    hf_logging: Any = importlib.import_module("transformers.utils.logging")  # untyped helpers
    bars = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()  # the library prints nothing, transformers' bars included
    try:
        tok = AutoTokenizer.from_pretrained(str(root))
        model: Any = AutoModelForCausalLM.from_pretrained(str(root), dtype=dtype)
    except (OSError, ValueError, KeyError) as e:
        raise SourceError(
            f"transformers cannot load the target: {e}",
            path=str(target),
            hint="the target must be a transformers causal LM with safetensors weights and a tokenizer",
        ) from None
    finally:
        if bars:
            hf_logging.enable_progress_bar()
    model = model.to(device).eval()
    return Target(model, tok, taps, device, label or str(target))
