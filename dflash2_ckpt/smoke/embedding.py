"""The target's input embedding and LM head, which the drafter borrows (it owns neither).

Order of preference for each: a copy carried by the checkpoint, the target given with --target
(only those two tensors are read, sharded or not), the embedding again for a tied head, and last a
seeded random matrix of the right shape — which proves the drafter's own tensors run, but not what
it drafts, so the report says so.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import torch
from safetensors import safe_open

from ..errors import SourceError
from ..findings import Finding
from ..formats.spec import DraftSpec
from ..sources.names import INDEX
from .weights import does_not_fit

EMITS: frozenset[str] = frozenset({"DF711"})


@dataclass
class Borrowed:
    embed: torch.Tensor
    head: torch.Tensor
    source: dict[str, str]  # {"embed_tokens": ..., "lm_head": ...}
    findings: list[Finding] = field(default_factory=list)


def _target_names(root: Path) -> dict[str, Path]:
    """Tensor name -> shard of the target checkpoint, from its index or its headers."""
    index = root / INDEX
    if index.is_file():
        try:
            wm = json.loads(index.read_text())["weight_map"]
        except (OSError, ValueError, KeyError, TypeError) as e:
            raise SourceError(f"cannot read the target's {INDEX}: {e}", path=str(root)) from None
        return {k: root / v for k, v in wm.items() if isinstance(v, str) and "/" not in v and ".." not in v}
    out: dict[str, Path] = {}
    for p in sorted(root.glob("*.safetensors")):
        with safe_open(str(p), framework="pt") as f:
            for k in f.keys():  # noqa: SIM118 (safe_open has keys(), no __iter__)
                out[k] = p
    return out


def _pick(names: dict[str, Path], suffix: str) -> str | None:
    # model.embed_tokens.weight, model.language_model.embed_tokens.weight, ...: the shortest wins
    hits = sorted((n for n in names if n == suffix or n.endswith("." + suffix)), key=len)
    return hits[0] if hits else None


def _tied(root: Path) -> bool:
    try:
        cfg = json.loads((root / "config.json").read_text())
    except (OSError, ValueError):
        return False
    if not isinstance(cfg, dict):
        return False
    inner = cfg.get("text_config")
    text = inner if isinstance(inner, dict) else {}
    return bool(cfg.get("tie_word_embeddings", text.get("tie_word_embeddings", False)))


def read_target(root: Path, device: torch.device) -> tuple[torch.Tensor | None, torch.Tensor | None]:
    """(embed, head) read from a target model directory; the head falls back to the embed when tied."""
    if not root.is_dir():
        raise SourceError(
            "the target is not a directory",
            path=str(root),
            hint="give --target the local directory of the target model",
        )
    names = _target_names(root)
    got: dict[str, torch.Tensor | None] = {}
    for key, suffix in (("embed", "embed_tokens.weight"), ("head", "lm_head.weight")):
        name = _pick(names, suffix)
        if name is None or not names[name].is_file():
            got[key] = None
            continue
        with safe_open(str(names[name]), framework="pt", device="cpu") as f:
            got[key] = f.get_tensor(name).to(device=device, dtype=torch.float32)
    if got["head"] is None and got["embed"] is not None and _tied(root):
        got["head"] = got["embed"]
    return got["embed"], got["head"]


def borrow(
    spec: DraftSpec, carried: dict[str, torch.Tensor], target: Path | None, seed: int, device: torch.device
) -> Borrowed:
    """Embedding and head for the smoke, with the source of each."""
    want = (spec.vocab_size, spec.hidden_size)
    findings: list[Finding] = []
    t_embed = t_head = None
    if target is not None:
        t_embed, t_head = read_target(Path(target), device)
    picked: dict[str, torch.Tensor] = {}
    source: dict[str, str] = {}
    gen = torch.Generator().manual_seed(seed ^ 0x5EED)
    for key, copy, from_target, scale in (
        ("embed_tokens", carried.get("embed_tokens.weight"), t_embed, 1.0),
        ("lm_head", carried.get("lm_head.weight"), t_head, spec.hidden_size**-0.5),
    ):
        for label, tensor in (("checkpoint", copy), ("target", from_target)):
            if tensor is None:
                continue
            if tuple(tensor.shape) != want:
                findings.append(
                    does_not_fit(
                        f"{key}.weight",
                        f"from the {label}",
                        list(tensor.shape),
                        "the drafter needs [vocab_size, hidden_size] =",
                        list(want),
                        "it was not used",
                        source=label,
                    )
                )
                continue
            picked[key], source[key] = tensor, label
            break
        if key not in picked:
            picked[key] = (torch.randn(want, generator=gen) * scale).to(device)
            source[key] = "random"
    randoms = [k for k, v in source.items() if v == "random"]
    if randoms:
        findings.append(
            Finding(
                "DF711",
                f"no target {' / '.join(randoms)} available (not in the checkpoint, no usable --target): "
                "drafted with a seeded random one, so the tokens prove the tensors run, not what they draft; "
                "pass --target DIR for real tokens",
                details={"random": randoms, "seed": seed},
            )
        )
    return Borrowed(picked["embed_tokens"], picked["lm_head"], source, findings)
