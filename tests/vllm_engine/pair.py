"""A pair vLLM's CPU build can run speculative decoding on: a random Qwen3 target and a DFlash v1 drafter
(seeded fixture values) with head_dim 64, which vLLM's CPU attention supports (the trained tiny pairs have
head_dim 16, which it refuses: 'Unsupported CPU attention configuration: head_dim=16'). The weights are
untrained, so it drafts and accepts nothing; it shows the counting, not a τ worth having."""

from __future__ import annotations

import copy
import json
import shutil
from pathlib import Path

from .cases import FIX, PAIR, _builder

GEOMETRY = dict(
    hidden_size=128,
    intermediate_size=256,
    num_attention_heads=2,
    num_key_value_heads=1,
    head_dim=64,
    vocab_size=64,
    max_position_embeddings=512,
)


def build(out: Path) -> dict[str, Path]:
    import torch
    from transformers import Qwen3Config, Qwen3ForCausalLM

    torch.manual_seed(0)
    target = out / "target"
    cfg = Qwen3Config(
        num_hidden_layers=4,
        tie_word_embeddings=False,
        eos_token_id=1,
        pad_token_id=0,
        bos_token_id=2,
        **GEOMETRY,
    )
    Qwen3ForCausalLM(cfg).to(torch.float32).save_pretrained(str(target))
    for name in ("tokenizer.json", "tokenizer_config.json", "prompts.jsonl"):  # the tiny pair's 64 tokens
        shutil.copy(PAIR / "target" / name, target / name)
    d = copy.deepcopy(json.loads((FIX / "good" / "nested-v1" / "config.json").read_text()))
    d.update(GEOMETRY)
    B = _builder()
    drafter: Path = B.write(out / "drafter-v1", d, B.layout(d))
    return {"target": target, "drafter": drafter}
